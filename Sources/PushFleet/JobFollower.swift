import Foundation
import PushJobs
import PushStore

/// Follows a job's statistics in Redis until it is complete, cancelled or paused, drawing a
/// progress bar: finished/targeted, sent, accepted, failed, the rate and the time left.
struct JobFollower {
    let jobs: JobStore
    var pollInterval: Duration = .milliseconds(250)
    /// Gives up after this long (nil: never).
    var timeout: Duration?
    var showProgress = true

    /// What following ended with.
    enum End: Equatable {
        case complete, cancelled, paused, timedOut
    }

    func follow(jobID: String, label: String) async throws -> (JobReport, End) {
        let start = ContinuousClock.now
        var bar = ProgressBar(label: label)
        var report = JobReport(jobID: jobID, counters: [:])
        defer { if showProgress { bar.finish() } }
        while true {
            report = try await JobReport.load(jobID: jobID, from: jobs)
            let elapsed = ContinuousClock.now - start
            if showProgress {
                bar.update(done: report.finished, total: max(report.targeted, report.expanded), detail: detail(report, elapsed: elapsed))
            }
            if report.state == .cancelled { return (report, .cancelled) }
            if report.state == .paused { return (report, .paused) }
            if report.isComplete { return (report, .complete) }
            if let timeout, elapsed >= timeout { return (report, .timedOut) }
            try await Task.sleep(for: pollInterval)
        }
    }

    private func detail(_ report: JobReport, elapsed: Duration) -> String {
        let seconds = max(elapsed / .seconds(1), 0.001)
        let rate = Double(report.finished) / seconds
        let left = max(report.targeted - report.finished, 0)
        let eta = rate > 0 && left > 0 ? "ETA \(Int((Double(left) / rate).rounded(.up)))s" : ""
        return "sent \(report.sent) accepted \(report.accepted) failed \(report.failed) · \(ProgressBar.grouped(Int(rate)))/s \(eta)"
    }
}
