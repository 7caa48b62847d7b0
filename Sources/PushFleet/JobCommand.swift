import ArgumentParser
import PushCore

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
            discussion: "Exit status: 0 when every file is a valid job, 1 when any is not.")

        @Flag(help: "One JSON object per file: file, valid, field, code, message, job.")
        var json = false

        @Argument(help: "Job files (JSON).")
        var files: [String]

        func run() throws {
            let validations = files.map(JobFileValidation.init(contentsOfFile:))
            for validation in validations {
                print(json ? validation.jsonLine : validation.textLine)
            }
            let status = JobFileValidation.exitCode(for: validations)
            if status != 0 { throw ExitCode(status) }
        }
    }
}
