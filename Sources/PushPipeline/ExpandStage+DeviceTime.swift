import APNsCore
import Foundation
import PushConfiguration
import PushCore
import PushJobs
import PushStore

/// Jobs sent at each device's own time (`send-at` as an object, ``DeviceSendTime``): each page
/// of devices is split by the slot its devices are due in (``DeviceSendPlan``); the current
/// slot's chunks are published as any job's, the others parked until their slot
/// (``ParkedChunks``), where ``ParkedChunkReleaser`` publishes them.
extension ExpandStage {
    /// When the job began expanding (ms since 1970), stored once: what every task plans from.
    /// Set and read in one script, so two workers expanding the job at the same moment agree
    /// on the first one's start (a read, then a write of its own, let each keep its own clock's).
    func timedFrom(jobID: String) async throws -> Int64 {
        let jobs = self.jobs
        let now = Int(outlet.clock())
        return Int64(
            try await Retrying.run("fixing the start of job \(jobID)", logger: outlet.logger) {
                try await jobs.setOnce(jobID: jobID, .timedFrom, to: now)
            })
    }

    /// The plan of a job sent at each device's own time; `nil` for any other.
    func sendPlan(of job: PushJob, jobID: String) async throws -> DeviceSendPlan? {
        guard let rule = job.sendAtDevice, let app = outlet.apps[job.app] else { return nil }
        let from = try await timedFrom(jobID: jobID)
        let zone = app.settings.statisticsTimeZone
        var fallback = from
        if case .bestHour(let within) = rule {
            let hours = self.hours
            let now = Date(timeIntervalSince1970: Double(from) / 1000)
            let grids = try await Retrying.run("reading the hours of app \(job.app)", logger: outlet.logger) {
                var grids: [HourGrid] = []
                for tag in job.audience.addressedTags {
                    grids.append(try await hours.week(app: job.app, tag: tag, days: HourReport.defaultDays, endingAt: now, in: zone))
                }
                grids.append(try await hours.week(app: job.app, days: HourReport.defaultDays, endingAt: now, in: zone))
                return grids
            }
            fallback = DeviceSendPlan.fallbackInstant(from: from, withinHours: within, grids: grids, timeZone: zone)
        }
        return DeviceSendPlan(rule: rule, from: from, appTimeZone: zone, fallback: fallback)
    }

    /// A task's chunks: one streamer for the notifications due now, and, for a job sent at each
    /// device's own time, one per slot they wait for.
    struct DeliveryStreams {
        let stage: ExpandStage
        let job: PushJob
        let jobID: String
        let prefix: String
        var plan: DeviceSendPlan?
        /// Which of the app's time buckets hold anything: read once, at the first page.
        var held: HeldTimeBuckets?
        var now: ChunkStreamer
        var later: [Int64: ChunkStreamer] = [:]

        init(stage: ExpandStage, job: PushJob, jobID: String, prefix: String, plan: DeviceSendPlan?) {
            self.stage = stage
            self.job = job
            self.jobID = jobID
            self.prefix = prefix
            self.plan = plan
            now = ChunkStreamer(stage: stage, job: job, jobID: jobID, prefix: prefix)
        }

        /// Tokens added.
        var total: Int { later.values.reduce(now.total) { $0 + $1.total } }
        /// Tokens in chunks Kafka or the parked lists have.
        var published: Int { later.values.reduce(now.published) { $0 + $1.published } }

        /// Adds tokens, each to the streamer of its slot; answers why the job stopped, if it did.
        mutating func add(_ tokens: [DeviceToken], positions: [UInt32]) async throws -> JobStop? {
            guard var plan else { return try await now.add(tokens, positions: positions) }
            let registry = stage.registry
            let (app, bestHour) = (job.tokenKind.registry(of: job.app), plan.needsHours)
            let logger = stage.outlet.logger
            let buckets: HeldTimeBuckets
            if let held {
                buckets = held
            } else {
                buckets = try await Retrying.run("reading which buckets of app \(app) hold device times", logger: logger) {
                    try await registry.heldTimeBuckets(app: app)
                }
                held = buckets
            }
            let times = try await Retrying.run("reading the device times of job \(jobID)", logger: logger) {
                try await registry.deviceTimes(app: app, tokens: tokens, hours: bestHour, held: buckets)
            }
            var bySlot: [Int64?: (tokens: [DeviceToken], positions: [UInt32])] = [:]
            for (index, time) in times.enumerated() {
                let slot = plan.slot(of: plan.instant(timeZone: time.timeZone, hours: time.receiptHours))
                bySlot[slot, default: ([], [])].tokens.append(tokens[index])
                bySlot[slot, default: ([], [])].positions.append(positions[index])
            }
            self.plan = plan
            for (slot, group) in bySlot.sorted(by: { ($0.key ?? 0) < ($1.key ?? 0) }) {
                let stop: JobStop?
                if let slot {
                    var streamer = later[slot] ?? ChunkStreamer(stage: stage, job: job, jobID: jobID, prefix: "\(prefix)q\(slot)-", slot: slot)
                    stop = try await streamer.add(group.tokens, positions: group.positions)
                    later[slot] = streamer
                } else {
                    stop = try await now.add(group.tokens, positions: group.positions)
                }
                if let stop { return stop }
            }
            return nil
        }

        /// Publishes or parks what is left; answers why the job stopped, if it did.
        mutating func finish() async throws -> JobStop? {
            if let stop = try await now.finish() { return stop }
            for slot in later.keys.sorted() {
                guard var streamer = later[slot] else { continue }
                let stop = try await streamer.finish()
                later[slot] = streamer
                if let stop { return stop }
            }
            return nil
        }
    }
}
