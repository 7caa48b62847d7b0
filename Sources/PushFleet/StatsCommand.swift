import ArgumentParser
import Foundation
import Logging
import PushConfiguration
import PushCore
import PushJobs
import PushStore
import Redis

/// `pushfleet stats JOB`: a job's statistics from Redis.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract:
            "Print a job's statistics: its state (paused, and why), targeted, sent, accepted, failed by reason, removed, kept aside, retried, dead-lettered."
    )

    @OptionGroup var options: ProcessOptions

    @Argument(help: "The job id.")
    var job: String

    @Flag(help: "Print the status as JSON (the API's JobStatus).")
    var json = false

    func run() async throws {
        let configuration = try options.loadConfiguration()
        var logger = Logger(label: "pushfleet.client")
        logger.logLevel = .error
        let redis = try configuration.redis.makeClient(clientName: "pushfleet-cli", logger: logger)
        let jobs = JobStore(client: redis)
        let report: JobReport
        let spec: [UInt8]?
        do {
            report = try await JobReport.load(jobID: job, from: jobs)
            spec = try await jobs.spec(jobID: job)
            await redis.shutdown()
        } catch {
            await redis.shutdown()
            throw error
        }
        if spec == nil && report == JobReport(jobID: job, counters: [:]) {
            FileHandle.standardError.write(Data("no statistics for job '\(job)' (unknown, or expired)\n".utf8))
            throw ExitCode(2)
        }
        if json {
            let app = spec.flatMap(JobStore.app(ofSpec:)) ?? ""
            print(String(decoding: report.json(app: app).compactData(), as: UTF8.self))
        } else {
            report.lines.forEach { print($0) }
        }
    }
}
