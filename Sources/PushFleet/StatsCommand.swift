import ArgumentParser
import Foundation
import Logging
import PushConfiguration
import PushCore
import PushJobs
import PushStore
import Redis

/// `pushfleet stats JOB` (`stats job JOB`): a job's statistics from Redis; `pushfleet stats
/// hours`: an app's hour-of-day statistics.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print a job's statistics (`stats JOB`), or when an app's notifications are read (`stats hours --app APP`).",
        subcommands: [Job.self, Hours.self],
        defaultSubcommand: Job.self
    )
}

extension StatsCommand {
    /// `pushfleet stats JOB`: a job's statistics from Redis.
    struct Job: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print a job's statistics: its state (paused, and why), targeted, sent, accepted, failed by reason, removed, kept aside, retried, dead-lettered. `stats JOB` is short for it (`stats job hours` for a job named hours)."
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
}

extension StatsCommand {
    /// `pushfleet stats hours --app APP [--tag T] [--days N]`: the app's delivery rate by weekday
    /// and hour of its time zone (`apps.<id>.time-zone`), as `GET /v1/apps/{app}/stats/hours`.
    struct Hours: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print when an app's notifications are read: sent, delivered and opened by weekday and hour of its time zone.")

        @OptionGroup var options: ProcessOptions

        @Option(help: "The app id.") var app: String
        @Option(help: "Only the jobs that addressed this tag.") var tag: String?
        @Option(help: "The days to add up, 1 to \(HourStatistics.maxDays) (default \(HourReport.defaultDays)).") var days = HourReport.defaultDays
        @Flag(help: "Print the statistics as JSON (the API's HourStatistics).") var json = false

        func validate() throws {
            guard (1...HourStatistics.maxDays).contains(days) else {
                throw ValidationError("--days must be 1 to \(HourStatistics.maxDays), is \(days)")
            }
        }

        func run() async throws {
            let configuration = try options.loadConfiguration()
            guard let settings = configuration.apps[app] else {
                throw ValidationError("no app '\(app)' in the configuration (apps: \(configuration.apps.keys.sorted().joined(separator: ", ")))")
            }
            var logger = Logger(label: "pushfleet.client")
            logger.logLevel = .error
            let redis = try configuration.redis.makeClient(clientName: "pushfleet-cli", logger: logger)
            let grid: HourGrid
            do {
                grid = try await HourStatistics(client: redis).week(
                    app: app, tag: tag, days: days, endingAt: Date(), in: settings.statisticsTimeZone)
                await redis.shutdown()
            } catch {
                await redis.shutdown()
                throw error
            }
            let report = HourReport(app: app, timeZone: settings.timeZone, tag: tag, days: days, grid: grid)
            if json {
                print(String(decoding: report.json.compactData(), as: UTF8.self))
            } else {
                report.lines.forEach { print($0) }
            }
        }
    }
}
