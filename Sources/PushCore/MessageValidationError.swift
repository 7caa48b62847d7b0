/// Why a message was rejected (a push job, a delivery chunk, a feedback event, a job or device
/// sent to the API): the field at fault, a stable code, and a message for people.
///
/// `field` is a dotted path into the message as JSON (`headers.collapse-id`, `audience.tokens[3]`,
/// `notification.aps`); `$` means the document as a whole.
public struct MessageValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The path of the offending field.
    public let field: String
    /// What kind of problem it is; stable across releases, for programs to branch on.
    public let code: Code
    /// A sentence for people; wording may change.
    public let message: String

    public init(field: String, code: Code, message: String) {
        self.field = field
        self.code = code
        self.message = message
    }

    init(_ path: FieldPath, _ code: Code, _ message: String) {
        self.init(field: path.description, code: code, message: message)
    }

    /// The error for a value of the wrong JSON type.
    static func type(_ path: FieldPath, expected: String, got value: JSONValue) -> Self {
        Self(path, .invalidType, "must be \(expected), got \(value.typeName)")
    }

    public var description: String { "\(field): \(message) [\(code)]" }
}
