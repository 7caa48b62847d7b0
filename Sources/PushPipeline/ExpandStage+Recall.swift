import APNsCore
import Logging
import PushCore
import PushJobs
import PushStore

/// A recall's audience: its campaign's, narrowed to the devices whose notification APNs
/// accepted (a sent marker without a refused bit, or a token accepted on a resend).
struct RecallNarrowing: Sendable {
    let campaignID: String
    let acceptedResends: Set<DeviceToken>
    let jobs: JobStore

    /// The tokens (and their positions) of `tokens` that accepted the campaign, in order.
    func narrow(_ tokens: [DeviceToken], positions: [UInt32]) async throws -> (tokens: [DeviceToken], positions: [UInt32]) {
        let accepted = try await jobs.wasAccepted(jobID: campaignID, positions: positions)
        var kept: (tokens: [DeviceToken], positions: [UInt32]) = ([], [])
        for index in tokens.indices where accepted[index] || acceptedResends.contains(tokens[index]) {
            kept.tokens.append(tokens[index])
            kept.positions.append(positions[index])
        }
        return kept
    }
}

extension ExpandStage {
    /// The narrowing of a recall job's audience; nil for any other job.
    func narrowing(of job: PushJob) async throws -> RecallNarrowing? {
        guard let campaignID = job.recall?.jobID else { return nil }
        let jobs = self.jobs
        let resends = try await Retrying.run("reading the accepted resends of job \(campaignID)", logger: outlet.logger) {
            try await jobs.acceptedResends(jobID: campaignID)
        }
        return RecallNarrowing(campaignID: campaignID, acceptedResends: resends, jobs: jobs)
    }

    /// `tokens` at `positions`, narrowed by `narrowing` when there is one.
    func narrowed(
        _ tokens: [DeviceToken], positions: [UInt32], by narrowing: RecallNarrowing?, jobID: String
    ) async throws -> (tokens: [DeviceToken], positions: [UInt32]) {
        guard let narrowing else { return (tokens, positions) }
        return try await Retrying.run("narrowing recall \(jobID) to the devices that accepted job \(narrowing.campaignID)", logger: outlet.logger) {
            try await narrowing.narrow(tokens, positions: positions)
        }
    }

    /// Before a recall reads its campaign's sent state: waits until the campaign has nothing
    /// in flight (``RecallSettling``).
    func awaitSettled(campaign campaignID: String, recall jobID: String) async throws {
        var settling = RecallSettling()
        let start = ContinuousClock.now
        let jobs = self.jobs
        while true {
            let report = try await Retrying.run("reading the report of recalled job \(campaignID)", logger: outlet.logger) {
                try await JobReport.load(jobID: campaignID, from: jobs)
            }
            switch settling.observe(complete: report.isComplete, finished: report.finished, at: .now - start) {
            case .wait:
                try await Task.sleep(for: .milliseconds(500))
            case .go(let settled):
                if !settled {
                    outlet.logger.warning(
                        "recall goes on while its campaign still settles: a device whose acceptance is recorded later gets no withdraw",
                        metadata: ["job": "\(jobID)", "campaign": "\(campaignID)"])
                }
                return
            }
        }
    }
}
