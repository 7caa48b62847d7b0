import Yams

extension ConfigurationError {
    /// Translates a Yams parse error into a `(file)` error.
    ///
    /// Only libyaml's fixed problem texts and the position are kept: Yams' own descriptions quote the
    /// offending source line, which could contain a secret.
    init(yamlError: YamlError) {
        switch yamlError {
        case .scanner(let context, let problem, let mark, _),
            .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let prefix = context.map { "\($0.text): " } ?? ""
            self.init(key: Self.fileKey, message: "invalid YAML: \(prefix)\(problem)", line: mark.line)
        case .reader(let problem, _, _, _):
            self.init(key: Self.fileKey, message: "invalid YAML: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = duplicates.sorted().map { "'\($0)'" }.joined(separator: ", ")
            self.init(key: Self.fileKey, message: "duplicate key \(keys) in a mapping", line: context.mark.line)
        case .dataCouldNotBeDecoded:
            self.init(key: Self.fileKey, message: "the file is not valid UTF-8")
        default:
            self.init(key: Self.fileKey, message: "invalid YAML")
        }
    }
}
