import PushCore

/// A change to ``Fixtures/job`` that makes it invalid, and the error it must produce.
struct RejectionCase: Sendable, CustomStringConvertible {
    let name: String
    let keys: [String]
    let value: JSONValue?
    let field: String
    let code: MessageValidationError.Code

    /// Sets `value` at the dotted object path `keys` (removes the key when `value` is `nil`).
    init(_ name: String, set keys: String, to value: JSONValue?, field: String, code: MessageValidationError.Code) {
        self.name = name
        self.keys = keys.split(separator: ".").map(String.init)
        self.value = value
        self.field = field
        self.code = code
    }

    var job: JSONValue { Fixtures.job.setting(value, at: keys) }

    var description: String { name }
}
