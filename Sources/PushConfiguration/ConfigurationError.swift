/// A configuration problem found while loading, parsing or validating the PushFleet configuration.
///
/// Every error names the offending key as a dotted path (for example `apps.news.rate-per-second`),
/// `(file)` for a problem with the file as a whole, or the environment variable's name for a
/// malformed `PUSHFLEET__…` override. Messages never contain secret values (passwords, passphrases).
public struct ConfigurationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The dotted key path of the offending setting, `(file)`, or the name of an environment variable.
    public let key: String
    /// A human-readable explanation of the problem; never contains a secret value.
    public let message: String
    /// The 1-based line in the YAML file the problem was found at, when known.
    public let line: Int?

    /// Creates an error for `key` with `message`, optionally at a YAML `line`.
    public init(key: String, message: String, line: Int? = nil) {
        self.key = key
        self.message = message
        self.line = line
    }

    /// `"<key>: <message>"`, followed by `" (line N)"` when the line is known.
    public var description: String {
        if let line {
            return "\(key): \(message) (line \(line))"
        }
        return "\(key): \(message)"
    }
}
