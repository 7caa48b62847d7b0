import APNsCore
public import Foundation

/// The outcome of validating one job file, as `pushfleet job validate` reports it.
///
/// The subcommand is: validate each file, print ``jsonLine`` (with `--json`) or ``textLine``
/// for each, and exit with ``exitCode(for:)``.
public struct JobFileValidation: Hashable, Sendable {
    /// The file as named on the command line.
    public let file: String
    /// The job's summary, or why it was rejected.
    public let result: Result<PushJobSummary, MessageValidationError>

    /// Validates a job held in memory, then runs `check` on it (checks against the
    /// configuration, when one is known); `file` is only used for reporting.
    public init(file: String, data: Data, check: (PushJob) throws(MessageValidationError) -> Void = { _ in }) {
        do throws(MessageValidationError) {
            let job = try PushJob.decodeAndValidate(from: data)
            try check(job)
            self.init(file: file, result: .success(PushJobSummary(job)))
        } catch {
            self.init(file: file, result: .failure(error))
        }
    }

    /// Reads and validates the job file at `path` (then runs `check` on it); an unreadable file
    /// is reported with field `$` and code ``MessageValidationError/Code/unreadable``.
    public init(contentsOfFile path: String, check: (PushJob) throws(MessageValidationError) -> Void = { _ in }) {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            self.init(file: path, data: data, check: check)
        } catch {
            let reason = "cannot read the file: \(error.localizedDescription)"
            let error = MessageValidationError(field: "$", code: .unreadable, message: reason)
            self.init(file: path, result: .failure(error))
        }
    }

    private init(file: String, result: Result<PushJobSummary, MessageValidationError>) {
        self.file = file
        self.result = result
    }

    /// Whether the job is valid.
    public var isValid: Bool {
        if case .success = result { true } else { false }
    }

    /// One compact JSON object: `{"file", "valid", "field", "code", "message", "job"}`. For a
    /// valid job `field`, `code` and `message` are `null` and `job` is the
    /// ``PushJobSummary/jsonValue``; for an invalid one `job` is `null`.
    public var jsonLine: String {
        var object: JSONObject = ["file": .string(file), "valid": .bool(isValid)]
        switch result {
        case .success(let summary):
            object["field"] = .null
            object["code"] = .null
            object["message"] = .null
            object["job"] = summary.jsonValue
        case .failure(let error):
            object["field"] = .string(error.field)
            object["code"] = .string(error.code.rawValue)
            object["message"] = .string(error.message)
            object["job"] = .null
        }
        return String(decoding: JSONValue.object(object).compactData(), as: UTF8.self)
    }

    /// One line for people: `FILE: ok (...)` or `FILE: FIELD: MESSAGE [CODE]`.
    public var textLine: String {
        switch result {
        case .success(let summary):
            let recipients = summary.listedRecipients.map { " \($0)" } ?? ""
            return "\(file): ok (\(summary.app), \(summary.environment.rawValue), \(summary.audience)\(recipients), "
                + "\(summary.pushType), priority \(summary.priority), \(summary.payloadBytes) payload bytes)"
        case .failure(let error):
            return "\(file): \(error)"
        }
    }

    /// The process exit code for a run: 0 when every file is valid, 1 otherwise.
    public static func exitCode(for validations: [JobFileValidation]) -> Int32 {
        validations.allSatisfy(\.isValid) ? 0 : 1
    }
}
