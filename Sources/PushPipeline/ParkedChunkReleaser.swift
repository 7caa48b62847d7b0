import Kafka
import Logging
import PushCore
import PushJobs
import PushStore
import ServiceLifecycle

/// Publishes the chunks parked for a slot (``ParkedChunks``) to `push.deliveries` when the slot
/// comes and the job's expansion is complete (so that no task still parks into a list being
/// released), and counts them as released for its report. A claim is a lease: a list claimed by
/// a worker that dies is published by another, from the chunks not yet taken off it (the send
/// stage's markers keep a token from being sent twice).
struct ParkedChunkReleaser: Sendable {
    let outlet: PipelineOutlet
    let parked: ParkedChunks
    let jobs: JobStore
    var interval: Duration = .milliseconds(500)
    /// Chunks read and published at a time.
    var page = 64

    func run() async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let due = try await parked.claimDue(limit: 10)
                var released = 0
                for list in due {
                    if try await release(list) { released += 1 }
                }
                if released > 0 { continue }
            } catch {
                outlet.logger.warning("releasing parked chunks failed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown {
                try await Task.sleep(for: interval)
            }
        }
    }

    /// What to do with a due list.
    enum Decision: Equatable {
        /// Publish its chunks: no task parks into it any more.
        case publish
        /// Its job is still expanding: due again shortly.
        case postpone
        /// Kept past ``ParkedChunks/keptAfterSlot`` (its job's keys and its own are gone): its
        /// queue entry is removed.
        case forget
    }

    /// A due list is published once its job's expansion is complete, or once the job is
    /// cancelled: the send stage then counts its chunks cancelled (a job paused in the middle of
    /// its expansion and cancelled is never expanded again, and would wait for ever).
    static func decision(slot: Int64, now: Int64, expansionComplete: Bool, cancelled: Bool) -> Decision {
        if expansionComplete || cancelled { return .publish }
        return now > slot + ParkedChunks.keptAfterSlot ? .forget : .postpone
    }

    /// Publishes a list's chunks; `false` when its job is still expanding (the list comes due
    /// again an interval later).
    private func release(_ list: ParkedChunks.List) async throws -> Bool {
        // The job's own counters say whether its expansion is complete; its sent ranges' outcome
        // counters (thousands of hashes for a large broadcast) are not read on every claim.
        let report = JobReport(jobID: list.jobID, counters: try await jobs.ownCounters(jobID: list.jobID))
        let cancelled = try await jobs.isCancelled(jobID: list.jobID)
        switch Self.decision(slot: list.slot, now: outlet.clock(), expansionComplete: report.expansionComplete, cancelled: cancelled) {
        case .publish:
            break
        case .postpone:
            try await parked.postpone(list, by: interval)
            return false
        case .forget:
            try await parked.release(list)
            outlet.logger.warning(
                "parked chunks forgotten: their job never finished expanding", metadata: ["job": "\(list.jobID)", "slot": "\(list.slot)"])
            return false
        }
        var tokens = 0
        while true {
            let chunks = try await parked.chunks(of: list, count: page)
            guard !chunks.isEmpty else { break }
            try await outlet.publish(
                chunks.map { KafkaProducerMessage(topic: PushTopic.deliveries, key: $0.key, value: $0.value) },
                "\(chunks.count) parked chunk(s) of job \(list.jobID)")
            try await parked.drop(chunks.count, from: list)
            let count = chunks.reduce(0) { $0 + $1.tokenCount }
            try await jobs.increment(jobID: list.jobID, [.released(slot: list.slot): count])
            tokens += count
        }
        try await parked.release(list)
        outlet.logger.info(
            "parked chunks released", metadata: ["job": "\(list.jobID)", "slot": "\(list.slot)", "notifications": "\(tokens)"])
        return true
    }
}
