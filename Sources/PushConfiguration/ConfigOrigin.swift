/// Where a configuration value came from, for error messages.
enum ConfigOrigin: Sendable, Equatable {
    /// The YAML file, at a 1-based line when known.
    case file(line: Int?)
    /// A `PUSHFLEET__…` environment variable override.
    case environment(variable: String)

    /// The file line, if the value came from the file and its position is known.
    var line: Int? {
        if case .file(let line) = self { return line }
        return nil
    }
}
