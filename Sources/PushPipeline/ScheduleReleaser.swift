import Kafka
import Logging
import PushConfiguration
import PushCore
import PushStore
import ServiceLifecycle

/// Publishes scheduled jobs back to `push.jobs` when they are due. A claim is a lease, so a
/// job claimed by a worker that dies is released by another; a job published twice expands
/// twice, and the send stage's markers keep its tokens from being sent twice.
struct ScheduleReleaser: Sendable {
    let outlet: PipelineOutlet
    let schedule: JobSchedule
    var interval: Duration = .milliseconds(500)

    func run() async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let due = try await schedule.claimDue(limit: 100)
                for job in due {
                    try await outlet.publish(
                        [KafkaProducerMessage(topic: PushTopic.jobs, key: Array(job.jobID.utf8), value: job.json)], "scheduled job \(job.jobID)")
                    try await schedule.remove(jobID: job.jobID)
                    outlet.counters.add(.jobsReleased)
                    outlet.logger.info("scheduled job released", metadata: ["job": "\(job.jobID)"])
                }
                if !due.isEmpty { continue }
            } catch {
                outlet.logger.warning("releasing scheduled jobs failed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown {
                try await Task.sleep(for: interval)
            }
        }
    }
}
