import ArgumentParser
import Foundation
import PushCore
import PushPipeline
import PushStore

/// `pushfleet jobs …`: jobs that were published.
struct JobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "Work with published jobs.",
        subcommands: [Cancel.self])

    /// `pushfleet jobs cancel JOB`
    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cancel a job that has not finished: the workers stop sending it.",
            discussion: "Exit status: 0 cancelled, 2 unknown job, 5 the job is complete already.")

        @OptionGroup var options: ClientOptions
        @Argument(help: "The job id.") var job: String

        func run() async throws {
            try await ClientSession.with(options, kafka: false) { session in
                let jobs = session.jobs
                guard let spec = try await jobs.spec(jobID: job) else {
                    printError("pushfleet: no job '\(job)' (unknown, or expired)")
                    throw ExitCode(2)
                }
                let app = (try? JSONValue(parsing: Data(spec)).objectValue?["app"]?.stringValue) ?? ""
                let before = JobReport(jobID: job, counters: try await jobs.statistics(jobID: job))
                if before.isComplete && !before.cancelRequested {
                    printError("pushfleet: job \(job) is complete: nothing is left to cancel")
                    throw ExitCode(5)
                }
                try await jobs.cancel(jobID: job, at: Int64(Date().timeIntervalSince1970 * 1000))
                let report = JobReport(jobID: job, counters: try await jobs.statistics(jobID: job))
                if options.json {
                    print(String(decoding: report.json(app: app).compactData(), as: UTF8.self))
                } else {
                    print("▸ job \(job) cancelled: \(report.finished) of \(report.targeted) already had their outcome")
                }
            }
        }
    }
}
