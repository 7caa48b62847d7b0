import ArgumentParser
import PushConfiguration
import PushCore
import PushJobs

/// `pushfleet job …`: work with push job documents.
struct JobCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "job",
        abstract: "Work with push job documents.",
        subcommands: [Validate.self])

    /// `pushfleet job validate FILE…`: checks job files as a worker would before expanding them.
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate push job files against PushFleet's rules.",
            discussion: """
                With --config, each job is also checked against its app's configuration as the API and the workers                 check it: the app exists and is enabled for the job's environment, and headers.topic is one of the app's                 topics (its bundle id or an extra topic, with the push type's suffix).                 Exit status: 0 when every file is a valid job, 1 when any is not.
                """)

        @Flag(help: "One JSON object per file: file, valid, field, code, message, job.")
        var json = false

        @Option(help: "A configuration file (YAML) to check each job's app, environment and topic against.")
        var config: String?

        @Argument(help: "Job files (JSON).")
        var files: [String]

        func run() throws {
            var apps: [String: AppSettings]?
            if let config {
                do {
                    apps = try PushFleetConfiguration.load(path: config).apps
                } catch {
                    throw ValidationError("configuration \(config): \(error)")
                }
            }
            let validations = files.map { file in
                JobFileValidation(contentsOfFile: file) { job throws(MessageValidationError) in
                    guard let apps else { return }
                    guard let app = apps[job.app] else {
                        throw MessageValidationError(
                            field: "app", code: .unknownApp,
                            message: "app '\(job.app)' is not configured; configured apps: \(apps.keys.sorted().joined(separator: ", "))")
                    }
                    try app.check(job)
                }
            }
            for validation in validations {
                print(json ? validation.jsonLine : validation.textLine)
            }
            let status = JobFileValidation.exitCode(for: validations)
            if status != 0 { throw ExitCode(status) }
        }
    }
}
