import APNs
import APNsCore
import Foundation
import Kafka
import Logging
import PushConfiguration
import PushCore
import PushJobs
import PushStore
import Tracing

/// Consumes `push.jobs`: validates each job (or dead-letters it with the reason and its bytes),
/// parks jobs whose send-at is ahead in the schedule, and turns an audience into chunks of
/// ≤ `worker.chunk-size` tokens on `push.deliveries`:
///
/// - tokens: as given, duplicates dropped;
/// - openids: resolved through the registry (unknown ones and devices of the other environment
///   are counted);
/// - channel: sent here, as one broadcast request (``broadcast(on:job:jobID:app:message:)``);
/// - tags and broadcast: one shard task per registry shard (``ShardTask``, header `shard` =
///   `<shard>/<count>`), published back to `push.jobs`; each task scans its shards bucket by
///   bucket, filtered by environment and tags, and streams chunks, so memory does not grow with
///   the audience;
/// - area: 16 area tasks, the same way; each searches every 16th location bucket for the devices
///   in the circle (``DeviceRegistry/scanArea(app:task:environment:filter:area:cursor:count:)``).
///
/// Each token goes out with its position in the job's sent state: its index in a token list,
/// or its device id.
///
/// Counters are written idempotently (HSET, chunk ids), so a job expanded twice after a crash
/// counts once; its chunks are published again and the send stage's markers skip them.
///
/// A job whose `headers.topic` is not one of its app's topics is dead-lettered (field
/// `headers.topic`). A cancelled job stops expanding; a paused one too, and is published again
/// when it resumes (``JobOperator/resume(jobID:at:)``).
struct ExpandStage: Sendable {
    let outlet: PipelineOutlet
    let registry: DeviceRegistry
    let jobs: JobStore
    let controls: JobControlCache
    let idempotency: IdempotencyKeys
    let schedule: JobSchedule
    let channels: ChannelStore
    let activityTokens: ActivityTokenStore
    /// The hour-of-day statistics: a best-hour job's fallback for devices without a history.
    let hours: HourStatistics
    /// Where the chunks of a job sent at each device's own time wait for their slot.
    let parked: ParkedChunks
    /// The APNs client of each app, for broadcasts on channels.
    let clients: [String: APNsClient]
    /// Tokens per chunk (`worker.chunk-size`).
    let chunkSize: Int
    /// Chunks published per producer call.
    var publishWindow = 8

    /// Handles one message; `false` when the worker stopped before it finished.
    func handle(_ message: KafkaConsumerMessage) async -> Bool {
        let shardTask = message.headers.contains { $0.name == PushMessageHeader.shard }
        return await outlet.handle(message, span: shardTask ? "expand shard task" : "expand job", stage: "expand stage") { span in
            switch try await process(message, span: span) {
            case nil:
                return
            case .cancelled(let jobID):
                outlet.counters.add(.jobsCancelled)
                outlet.logger.info("job cancelled: expansion stopped", metadata: ["job": "\(jobID)"])
            case .paused(let jobID):
                outlet.counters.add(.expansionsLeftForResume)
                outlet.logger.info("job paused: expansion left for its resume", metadata: ["job": "\(jobID)"])
            }
        }
    }

    /// Validates the message, then carries out its ``ExpandRoute``. Answers why the job stopped
    /// on the way, if it did.
    private func process(_ message: KafkaConsumerMessage, span: any Span) async throws -> JobStop? {
        guard let (job, app) = try await validated(message, span: span) else { return nil }
        switch ExpandRoute(job, shardHeader: message.headers.first { $0.name == PushMessageHeader.shard }?.value, now: Date()) {
        case .shardTask(let text):
            return try await expandShardTask(text, of: job, app: app, message: message, span: span)
        case .job(let dueAt, let audience):
            var job = job
            let jobID = job.id ?? "\(message.topic)-\(message.partition)-\(message.offset)"
            job.id = jobID
            switch try await admit(job, jobID: jobID, app: app) {
            case .admitted: break
            case .duplicate: return nil
            case .stopped(let stop): return stop
            }
            // The job with its id, as stored for resends, scheduled, and sent as shard tasks.
            let spec = Array(job.jsonData())
            if let dueAt {
                try await schedule(job, jobID: jobID, app: app, dueAt: dueAt, spec: spec)
                return nil
            }
            _ = try await Retrying.run("storing job \(jobID)", logger: outlet.logger) {
                try await jobs.saveSpec(jobID: jobID, json: spec)
            }
            if job.sendAtDevice != nil {
                // Fixed before any task plans: every task, and the job expanded again, plan alike.
                _ = try await timedFrom(jobID: jobID)
            }
            if let recall = job.recall {
                try await awaitSettled(campaign: recall.jobID, recall: jobID)
            }
            let stop: JobStop?
            switch audience {
            case .channel(let channelID):
                stop = try await broadcast(on: channelID, job: job, jobID: jobID, app: app, message: message)
            case .list(let tokens):
                let list = try await narrowed(tokens, positions: tokens.indices.map { UInt32($0) }, by: narrowing(of: job), jobID: jobID)
                try await setCounters([.targeted: list.tokens.count], jobID: jobID)
                stop = try await publishList(list.tokens, positions: list.positions, prefix: "t", of: job, jobID: jobID)
            case .activity(let activity):
                stop = try await expandActivity(activity, of: job, jobID: jobID, app: app)
            case .openIDs(let openIDs):
                stop = try await expandOpenIDs(openIDs, of: job, jobID: jobID, app: app)
            case .fanOut:
                try await fanOut(job, jobID: jobID, app: app, spec: spec)
                stop = nil
            }
            if stop == nil {
                outlet.counters.add(.jobsExpanded)
                outlet.logger.info("job expanded", metadata: ["job": "\(jobID)", "app": "\(app.id)", "audience": "\(job.audience.kind)"])
            }
            return stop
        }
    }

    /// The job the message holds, with its app, once it is valid; `nil` when it was
    /// dead-lettered.
    private func validated(_ message: KafkaConsumerMessage, span: any Span) async throws -> (PushJob, PushApp)? {
        let job: PushJob
        do {
            job = try PushJob.decodeAndValidate(from: Data(message.value))
        } catch {
            try await outlet.deadLetter(message, invalid: error)
            return nil
        }
        if span.isRecording {
            span.attributes["pushfleet.app"] = job.app
            span.attributes["pushfleet.job"] = job.id ?? "\(message.topic)-\(message.partition)-\(message.offset)"
            span.attributes["pushfleet.audience"] = job.audience.kind
        }
        guard let app = try await outlet.app(named: job.app, environment: job.environment, for: message) else { return nil }
        do {
            try job.validateTopic(bundleIDs: app.settings.topicBundleIDs)
        } catch {
            try await outlet.deadLetter(message, invalid: error)
            return nil
        }
        return (job, app)
    }

    /// A shard task whose header fits the app's registry layout, scanned; any other is
    /// dead-lettered.
    private func expandShardTask(
        _ text: String, of job: PushJob, app: PushApp, message: KafkaConsumerMessage, span: any Span
    ) async throws -> JobStop? {
        span.attributes["pushfleet.shard-task"] = text
        let task: ShardTask?
        let misfit: String
        if Self.searchedArea(of: job) != nil {
            // An area task reads location buckets, whatever the registry's layout.
            task = ShardTask(text).flatMap { (try? DeviceRegistry.locationBuckets(of: $0)) != nil ? $0 : nil }
            misfit = "is not an area task (one of \(DeviceRegistry.areaTaskCount))"
        } else {
            let registry = self.registry
            // Read afresh: the task may come from a layout this process has not seen yet.
            let layout = try await Retrying.run("reading the registry layout of app \(app.id)", logger: outlet.logger) {
                try await registry.refreshLayout(app: job.tokenKind.registry(of: app.id))
            }
            // A bare shard number comes from a release before shard counts could grow.
            task = (ShardTask(text) ?? Int(text).map { ShardTask(shard: $0, of: layout.taskCount) }).flatMap {
                (try? layout.shardsOfTask($0.shard, of: $0.count)) != nil ? $0 : nil
            }
            misfit = "does not fit the registry layout of app \(app.id) (\(layout))"
        }
        guard let jobID = job.id, let task else {
            try await outlet.deadLetter(
                message, reason: "invalid-shard-task", text: "shard task '\(text)' of job \(job.id ?? "(no id)") \(misfit)", app: app.id)
            return nil
        }
        return try await expandShard(task, of: job, jobID: jobID)
    }

    private enum Admission {
        case admitted
        /// Cancelled or paused before its audience was read.
        case stopped(JobStop)
        /// Its idempotency key belongs to another job: skipped.
        case duplicate
    }

    /// What comes before a job is scheduled or expanded: a job cancelled already completes its
    /// report with nothing targeted; a job whose idempotency key another job holds is skipped;
    /// the job is listed for its app.
    private func admit(_ job: PushJob, jobID: String, app: PushApp) async throws -> Admission {
        switch try await stop(of: jobID) {
        case .cancelled:
            // Cancelled before its audience was read: nothing is targeted, and the report completes.
            try await setCounters([.expansionComplete: 1], jobID: jobID)
            return .stopped(.cancelled(jobID: jobID))
        case .paused:
            return .stopped(.paused(jobID: jobID))
        case nil:
            break
        }
        if let key = job.idempotencyKey {
            let owner = try await Retrying.run("claiming the idempotency key of job \(jobID)", logger: outlet.logger) {
                try await idempotency.claim(app: app.id, key: key, jobID: jobID)
            }
            if let owner, owner.jobID != jobID {
                outlet.counters.add(.duplicateJobs)
                outlet.logger.notice(
                    "job skipped: its idempotency key belongs to another job",
                    metadata: ["job": "\(jobID)", "app": "\(app.id)", "first-job": "\(owner.jobID)"])
                try await setCounters([.duplicateJob: 1, .expansionComplete: 1], jobID: jobID)
                return .duplicate
            }
        }
        _ = try await Retrying.run("listing job \(jobID)", logger: outlet.logger) {
            try await jobs.index.add(app: app.id, jobID: jobID, at: outlet.clock())
        }
        return .admitted
    }

    /// Parks a job whose send-at is ahead until `dueAt` (milliseconds since the epoch).
    private func schedule(_ job: PushJob, jobID: String, app: PushApp, dueAt: Int64, spec: [UInt8]) async throws {
        _ = try await Retrying.run("scheduling job \(jobID)", logger: outlet.logger) {
            try await schedule.schedule(ScheduledJob(jobID: jobID, dueAt: dueAt, json: spec))
            try await jobs.set(jobID: jobID, [.scheduledAt: Int(dueAt)])
        }
        outlet.counters.add(.jobsScheduled)
        outlet.logger.info("job scheduled", metadata: ["job": "\(jobID)", "app": "\(app.id)", "due-at": "\(dueAt)"])
    }

    /// A Live Activity's update tokens, as a list.
    private func expandActivity(_ activity: LiveActivityID, of job: PushJob, jobID: String, app: PushApp) async throws -> JobStop? {
        let store = activityTokens
        let now = outlet.clock()
        let tokens = try await Retrying.run("reading the update tokens of activity \(activity) of job \(jobID)", logger: outlet.logger) {
            try await store.tokens(app: app.id, environment: job.environment, activity: activity, now: now)
        }
        try await setCounters([.targeted: tokens.count], jobID: jobID)
        return try await publishList(tokens, positions: tokens.indices.map { UInt32($0) }, prefix: "a", of: job, jobID: jobID)
    }

    /// Openids resolved to their devices, as a list in device-id order.
    private func expandOpenIDs(_ openIDs: [String], of job: PushJob, jobID: String, app: PushApp) async throws -> JobStop? {
        let resolution = try await Retrying.run("resolving openids of job \(jobID)", logger: outlet.logger) {
            try await registry.resolveOpenIDs(app: job.tokenKind.registry(of: app.id), environment: job.environment, openIDs: openIDs)
        }
        let ordered = try await narrowed(resolution.byID.tokens, positions: resolution.byID.ids, by: narrowing(of: job), jobID: jobID)
        try await setCounters(
            [
                .targeted: ordered.tokens.count, .unknownOpenIDs: resolution.unknownCount,
                .otherEnvironment: resolution.otherEnvironmentCount, .suspectDevices: resolution.suspectCount,
            ], jobID: jobID)
        return try await publishList(ordered.tokens, positions: ordered.positions, prefix: "o", of: job, jobID: jobID)
    }

    /// A broadcast or tag job: one shard task per task of the registry layout, back to `push.jobs`.
    private func fanOut(_ job: PushJob, jobID: String, app: PushApp, spec: [UInt8]) async throws {
        let registry = self.registry
        let jobs = self.jobs
        // A job expanded again (its message read a second time after a rebalance or a
        // restart) fans out as the first time did, even if the registry's shard count grew
        // in between: tasks of another count would cover the same devices under the same
        // chunk ids and the job's report could never add up. The count is stored before the
        // tasks are published, so a crash in between cannot split the fan-out either, and it
        // is stored once: two workers expanding the job at the same moment fan out alike.
        let shards = try await Retrying.run("fixing the fan-out of job \(jobID)", logger: outlet.logger) {
            if let first = try await jobs.ownCounters(jobID: jobID)[JobCounter.shards.name], first > 0 {
                return first
            }
            let count =
                Self.searchedArea(of: job) != nil
                ? DeviceRegistry.areaTaskCount : try await registry.refreshLayout(app: job.tokenKind.registry(of: app.id)).taskCount
            return try await jobs.setOnce(jobID: jobID, .shards, to: count)
        }
        let tasks = (0..<shards).map { shard in
            KafkaProducerMessage(
                topic: PushTopic.jobs, key: Array("\(jobID)/s\(shard)".utf8), value: spec,
                headers: [KafkaHeader(name: PushMessageHeader.shard, value: ShardTask(shard: shard, of: shards).description)])
        }
        try await outlet.publish(tasks, "\(shards) shard tasks of job \(jobID)")
    }

    /// Scans one shard task of a broadcast or tag job and streams its tokens out as chunks.
    private func expandShard(_ task: ShardTask, of job: PushJob, jobID: String) async throws -> JobStop? {
        let filter: ScanFilter
        switch job.audience {
        case .broadcast: filter = .devices
        // A recall of a tag campaign scans every device: one that lost the tag since still shows
        // the campaign, and the sent state keeps only those that got it.
        case .tags(let expression): filter = job.recall == nil ? .tags(expression) : .devices
        // Likewise an area campaign's recall: one that moved away since still shows it.
        case .area(_, let tags): filter = job.recall == nil ? tags.map(ScanFilter.tags) ?? .devices : .devices
        case .tokens, .openIDs, .channel, .activity: return nil
        }
        var streamer = DeliveryStreams(
            stage: self, job: job, jobID: jobID, prefix: "s\(task.shard)-", plan: try await sendPlan(of: job, jobID: jobID))
        var pages = registry.pages(
            app: job.tokenKind.registry(of: job.app), task: task, environment: job.environment, filter: filter,
            area: Self.searchedArea(of: job), pageSize: chunkSize
        ).makeAsyncIterator()
        let narrowing = try await narrowing(of: job)
        func nextPage() async throws -> (tokens: [DeviceToken], positions: [UInt32])? {
            let page = try await Retrying.run("scanning shard \(task) of job \(jobID)", logger: outlet.logger) {
                try await pages.next()
            }
            guard let page else { return nil }
            return try await narrowed(page.tokens, positions: page.ids, by: narrowing, jobID: jobID)
        }
        var stop = try await stop(of: jobID)
        while stop == nil, let page = try await nextPage() {
            stop = try await streamer.add(page.tokens, positions: page.positions)
        }
        if stop == nil { stop = try await streamer.finish() }
        switch stop {
        case nil:
            try await setCounters([.shardTargeted(task.shard): streamer.total, .shardDone(task.shard): 1], jobID: jobID)
            outlet.counters.add(.shardTasks)
        case .cancelled:
            // The rest of the shard is counted, not published, so that the cancelled job's
            // report still completes with its whole audience: sent or cancelled.
            var found = streamer.total
            while let page = try await nextPage() {
                found += page.tokens.count
            }
            try await setCounters(
                [.shardTargeted(task.shard): found, .shardCancelled(task.shard): found - streamer.published, .shardDone(task.shard): 1],
                jobID: jobID)
        case .paused:
            break
        }
        return stop
    }

    /// The circle a job's expansion searches the device locations of: an area job's, unless it
    /// is a recall (which scans every device of the registry, like a broadcast).
    static func searchedArea(of job: PushJob) -> GeoArea? {
        guard case .area(let area, _) = job.audience, job.recall == nil else { return nil }
        return area
    }

    /// Why work on the job stops now: cancelled or paused; `nil` while it runs.
    func stop(of jobID: String) async throws -> JobStop? {
        let controls = self.controls
        let state = try await Retrying.run("checking whether job \(jobID) may go on", logger: outlet.logger) {
            try await controls.state(jobID)
        }
        switch state {
        case .cancelled: return .cancelled(jobID: jobID)
        case .paused: return .paused(jobID: jobID)
        case .running: return nil
        }
    }

    func setCounters(_ counters: [JobCounter: Int], jobID: String) async throws {
        try await Retrying.run("updating statistics of job \(jobID)", logger: outlet.logger) {
            try await jobs.set(jobID: jobID, counters)
        }
    }

    /// Publishes the tokens of a tokens or openid job (at `positions`) as chunks `<prefix>0`,
    /// `<prefix>1`, …; when the job is cancelled on the way, counts what was not published as
    /// cancelled, so that its report still completes.
    private func publishList(_ tokens: [DeviceToken], positions: [UInt32], prefix: String, of job: PushJob, jobID: String) async throws -> JobStop? {
        var streamer = DeliveryStreams(stage: self, job: job, jobID: jobID, prefix: prefix, plan: try await sendPlan(of: job, jobID: jobID))
        var stop = try await streamer.add(tokens, positions: positions)
        if stop == nil { stop = try await streamer.finish() }
        switch stop {
        case nil:
            try await setCounters([.expansionComplete: 1], jobID: jobID)
        case .cancelled:
            try await setCounters([.cancelledBeforeExpansion: tokens.count - streamer.published, .expansionComplete: 1], jobID: jobID)
        case .paused:
            break
        }
        return stop
    }

    /// Collects tokens into chunks and publishes them a window at a time, recording each chunk
    /// in the job's statistics once Kafka has it.
    struct ChunkStreamer {
        let stage: ExpandStage
        let job: PushJob
        let jobID: String
        let prefix: String
        /// The slot its chunks wait for (``ParkedChunks``); `nil`: published now.
        let slot: Int64?
        var buffer: [DeviceToken] = []
        var bufferPositions: [UInt32] = []
        var window: [DeliveryChunk] = []
        var nextChunk = 0
        /// Tokens added.
        var total = 0
        /// Tokens in chunks Kafka has.
        var published = 0

        init(stage: ExpandStage, job: PushJob, jobID: String, prefix: String, slot: Int64? = nil) {
            self.stage = stage
            self.job = job
            self.jobID = jobID
            self.prefix = prefix
            self.slot = slot
        }

        /// Adds tokens, publishing each full window; answers why the job stopped, if it did.
        mutating func add(_ tokens: [DeviceToken], positions: [UInt32]) async throws -> JobStop? {
            precondition(tokens.count == positions.count, "one position per token")
            buffer.append(contentsOf: tokens)
            bufferPositions.append(contentsOf: positions)
            total += tokens.count
            while buffer.count >= stage.chunkSize {
                let chunkTokens = Array(buffer.prefix(stage.chunkSize))
                let chunkPositions = Array(bufferPositions.prefix(stage.chunkSize))
                buffer.removeFirst(stage.chunkSize)
                bufferPositions.removeFirst(stage.chunkSize)
                if let stop = try await enqueue(chunkTokens, positions: chunkPositions) { return stop }
            }
            return nil
        }

        /// Publishes what is left; answers why the job stopped, if it did.
        mutating func finish() async throws -> JobStop? {
            if !buffer.isEmpty {
                if let stop = try await enqueue(buffer, positions: bufferPositions) { return stop }
                buffer = []
                bufferPositions = []
            }
            return try await flush()
        }

        private mutating func enqueue(_ tokens: [DeviceToken], positions: [UInt32]) async throws -> JobStop? {
            window.append(DeliveryChunk(job: job, chunkID: "\(prefix)\(nextChunk)", tokens: tokens, positions: positions))
            nextChunk += 1
            guard window.count >= stage.publishWindow else { return nil }
            return try await flush()
        }

        /// Publishes the window unless the job stopped.
        private mutating func flush() async throws -> JobStop? {
            guard !window.isEmpty else { return nil }
            if let stop = try await stage.stop(of: jobID) { return stop }
            let (outlet, jobs, parked) = (stage.outlet, stage.jobs, stage.parked)
            let (chunks, jobID, slot) = (window, self.jobID, self.slot)
            if let slot {
                // Parked for its slot: published by the releaser when the slot comes.
                let list = ParkedChunks.List(jobID: jobID, task: prefix, slot: slot)
                // Expanded again (resumed, or after a worker died): what was parked and recorded
                // already waits once.
                let recorded = try await Retrying.run("reading the chunks of job \(jobID)", logger: outlet.logger) {
                    try await jobs.recordedChunks(jobID: jobID, chunkIDs: chunks.map(\.chunkID))
                }
                let parkedChunks = chunks.filter { !recorded.contains($0.chunkID) }.map { chunk in
                    ParkedChunks.Chunk(key: Array(chunk.messageKey.utf8), value: Array(chunk.jsonData()), tokenCount: chunk.tokens.count)
                }
                try await Retrying.run("parking chunks of job \(jobID)", logger: outlet.logger) {
                    try await parked.park(parkedChunks, in: list)
                }
            } else {
                let messages = chunks.map { chunk in
                    KafkaProducerMessage(topic: PushTopic.deliveries, key: Array(chunk.messageKey.utf8), value: Array(chunk.jsonData()))
                }
                try await outlet.publish(messages, "\(messages.count) chunk(s) of job \(jobID)")
            }
            try await Retrying.run("recording chunks of job \(jobID)", logger: outlet.logger) {
                for chunk in chunks {
                    try await jobs.recordChunk(jobID: jobID, chunkID: chunk.chunkID, tokenCount: chunk.tokens.count, parkedFor: slot)
                }
            }
            outlet.counters.add(.chunksPublished, chunks.count)
            published += chunks.reduce(0) { $0 + $1.tokens.count }
            window = []
            return nil
        }
    }
}
