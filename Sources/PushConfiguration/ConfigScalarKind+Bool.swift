extension ConfigScalarKind {
    /// The value of a YAML 1.1 boolean's text (`true`, `yes`, `on` … are true).
    static func boolValue(_ text: String) -> Bool {
        ["true", "yes", "on"].contains(text.lowercased())
    }
}
