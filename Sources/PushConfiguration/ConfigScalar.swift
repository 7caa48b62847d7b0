/// A scalar value in the configuration tree: its text exactly as written and its resolved type.
struct ConfigScalar: Sendable, Equatable {
    /// The scalar's text (after YAML unquoting/unescaping).
    var text: String
    /// The resolved YAML type.
    var kind: ConfigScalarKind
}
