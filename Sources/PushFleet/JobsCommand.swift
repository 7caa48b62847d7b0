import ArgumentParser
import Foundation
import PushConfiguration
import PushCore
import PushJobs
import PushStore

/// `pushfleet jobs …`: what operators do to published jobs (``JobOperator``).
struct JobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "Pause, resume, abort, recall a published job, or change its rate.",
        discussion: """
            A job the circuit breaker paused (see `pushfleet stats JOB`) waits for an operator: `resume` says its answers \
            are genuine (it goes on, and the registry changes they call for are applied), `abort` ends it (nothing more is \
            sent, and nothing it found out changes the registry). After fixing a configuration, abort the job and publish it \
            again.
            """,
        subcommands: [Pause.self, Resume.self, Abort.self, Rate.self, Recall.self])

    /// `pushfleet jobs pause JOB`
    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pause a running job fleet-wide: workers stop sending it at their next admission.",
            discussion: "Exit status: 0 paused (or paused already), 2 unknown job, 5 the job was cancelled.")

        @OptionGroup var options: ClientOptions
        @Argument(help: "The job id.") var job: String
        @Option(help: "Why, for the job's status.") var reason = "paused by an operator"

        func run() async throws {
            try await JobsCommand.operate(job, options: options, done: "paused") { jobOperator, at in
                try await jobOperator.pause(jobID: job, reason: reason, at: at)
            }
        }
    }

    /// `pushfleet jobs resume JOB`
    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resume a paused job: what the pause left undone is sent, nothing twice.",
            discussion: "Exit status: 0 resumed, 2 unknown job, 5 the job is not paused or was cancelled.")

        @OptionGroup var options: ClientOptions
        @Argument(help: "The job id.") var job: String

        func run() async throws {
            try await JobsCommand.operate(job, options: options, done: "resumed") { jobOperator, at in
                try await jobOperator.resume(jobID: job, at: at)
            }
        }
    }

    /// `pushfleet jobs abort JOB` (also `cancel`)
    struct Abort: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Abort (cancel) a job that has not finished: nothing more of it is sent.",
            discussion: """
                Registry changes held for the job (while the circuit breaker watched it, or while it was paused) are \
                discarded. Exit status: 0 aborted (or aborted already), 2 unknown job, 5 the job is complete already.
                """,
            aliases: ["cancel"])

        @OptionGroup var options: ClientOptions
        @Argument(help: "The job id.") var job: String
        @Option(help: "Why, for the job's status.") var reason = "aborted by an operator"

        func run() async throws {
            try await JobsCommand.operate(job, options: options, done: "aborted", refuseComplete: true) { jobOperator, at in
                try await jobOperator.cancel(jobID: job, reason: reason, at: at)
            }
        }
    }

    /// `pushfleet jobs rate JOB RATE`
    struct Rate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a running job's rate (notifications per second) without a restart.",
            discussion: """
                The rate replaces the job's own throttle.rate-per-second and nests inside its app's rate: a job may go \
                slower than its app, never faster. `none` removes it. Exit status: 0 set, 2 unknown job, 5 the job was \
                cancelled, 64 a rate that is not a number above 0.
                """)

        @OptionGroup var options: ClientOptions
        @Argument(help: "The job id.") var job: String
        @Argument(help: "Notifications per second (> 0), or `none`.") var rate: String

        func validate() throws {
            guard rate == "none" || (Double(rate).map { $0.isFinite && $0 > 0 } ?? false) else {
                throw ValidationError("the rate must be a number of notifications per second above 0, or none")
            }
        }

        func run() async throws {
            let value = rate == "none" ? nil : Double(rate)
            try await JobsCommand.operate(job, options: options, done: "rate set") { jobOperator, _ in
                try await jobOperator.setRate(jobID: job, value)
            }
        }
    }

    /// `pushfleet jobs recall JOB [--overwrite-with job.json]`
    struct Recall: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recall a campaign: what is not yet sent is cancelled; every device that accepted it gets a withdraw, or new content.",
            discussion: """
                The recall is a job of its own, throttled like any other, to the devices whose notification APNs \
                accepted. Without --overwrite-with each gets a background push {"aps": {"content-available": 1}, \
                "pushfleet": {"withdraw": "<job>"}}, for the app to remove the notification it shows; with it, the file's \
                notification (and headers, else the campaign's) under the campaign's collapse id, which replaces the \
                notification on the device. A campaign is recalled once, within jobs.recall-window-hours (default 24) \
                of its publication. Exit status: 0 published, 2 unknown job, 5 the campaign cannot be recalled \
                (recalled already, past the window, a channel or activity audience, no collapse id to overwrite), \
                65 an overwrite file that is not valid.
                """)

        @OptionGroup var options: ClientOptions
        @Argument(help: "The campaign's job id.") var job: String
        @Option(help: "A job file (JSON) whose notification, and headers if it has them, replace the campaign's on the devices.")
        var overwriteWith: String?

        func run() async throws {
            let content = try overwriteWith.map(Self.content(ofFile:))
            try await ClientSession.with(options, kafka: true) { session in
                let window = session.configuration.jobs.recallWindow
                let outcome: JobOperator.RecallOutcome
                do {
                    outcome = try await session.jobOperator.recall(
                        jobID: job, overwriteWith: content, at: Int64(Date().timeIntervalSince1970 * 1000), window: window)
                } catch let unknown as JobOperator.UnknownJob {
                    printError("pushfleet: \(unknown)")
                    throw ExitCode(2)
                } catch let refusal as RecallRefusal {
                    printError("pushfleet: \(refusal.concernsCampaign ? "" : "\(refusal.field): ")\(refusal.message)")
                    throw ExitCode(refusal.concernsCampaign ? 5 : 65)
                } catch let already as JobOperator.AlreadyRecalled {
                    printError("pushfleet: \(already)")
                    throw ExitCode(5)
                } catch let invalid as JobOperator.InvalidRecall {
                    printError("pushfleet: the recall of job \(job) is not a valid job: \(invalid)")
                    throw ExitCode(65)
                }
                let report = try await JobReport.load(jobID: outcome.recallID, from: session.jobs)
                if options.json {
                    let app = try await session.jobs.storedJob(jobID: outcome.recallID)?.app ?? ""
                    print(String(decoding: report.json(app: app).compactData(), as: UTF8.self))
                } else {
                    print(
                        "▸ job \(job) recalled (\(outcome.mode.rawValue)) by job \(outcome.recallID)\(outcome.cancelled ? "; what was not sent is cancelled" : "")"
                    )
                    print("    follow it: pushfleet stats \(outcome.recallID)")
                }
            }
        }

        /// The notification and headers of a job file, checked for shape.
        static func content(ofFile path: String) throws -> (notification: APNsPayload, headers: PushHeaders?) {
            let file: JSONObject
            do {
                guard let object = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: path))).objectValue else {
                    printError("pushfleet: \(path): a job file holds a JSON object")
                    throw ExitCode(65)
                }
                file = object
            } catch let exit as ExitCode {
                throw exit
            } catch {
                printError("pushfleet: \(path): \(error)")
                throw ExitCode(65)
            }
            var content = JSONObject()
            content["notification"] = file["notification"]
            content["headers"] = file["headers"]
            do {
                return try PushJob.overwriteContent(content, at: "overwrite-with")
            } catch {
                printError("pushfleet: \(path): \(error)")
                throw ExitCode(65)
            }
        }
    }

    /// Runs one operation on a job and prints its status afterwards. Exit status: 2 unknown job,
    /// 5 the operation does not apply (a complete job when `refuseComplete`).
    static func operate(
        _ jobID: String, options: ClientOptions, done: String, refuseComplete: Bool = false,
        _ operation: (JobOperator, Int64) async throws -> JobStore.ControlUpdate
    ) async throws {
        try await ClientSession.with(options, kafka: true) { session in
            let jobs = session.jobs
            guard let spec = try await jobs.spec(jobID: jobID) else {
                printError("pushfleet: no job '\(jobID)' (unknown, or expired)")
                throw ExitCode(2)
            }
            let app = JobStore.app(ofSpec: spec) ?? ""
            if refuseComplete {
                let before = try await JobReport.load(jobID: jobID, from: jobs)
                if before.isComplete && before.control.state != .cancelled {
                    printError("pushfleet: job \(jobID) is complete: nothing is left to abort")
                    throw ExitCode(5)
                }
            }
            let update: JobStore.ControlUpdate
            do {
                update = try await operation(session.jobOperator, Int64(Date().timeIntervalSince1970 * 1000))
            } catch let refusal as JobControl.Refusal {
                printError("pushfleet: job \(jobID): \(refusal.message)")
                throw ExitCode(5)
            }
            let report = try await JobReport.load(jobID: jobID, from: jobs)
            if options.json {
                print(String(decoding: report.json(app: app).compactData(), as: UTF8.self))
            } else {
                print("▸ job \(jobID) \(update.changed ? done : "unchanged (\(report.state.rawValue))")")
                report.lines.forEach { print("    \($0)") }
            }
        }
    }
}
