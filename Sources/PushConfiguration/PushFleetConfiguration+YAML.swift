import Foundation

extension PushFleetConfiguration {
    /// Parses a configuration from YAML text, applying `PUSHFLEET__…` overrides from `environment`
    /// before validating. No file is touched; see ``validateFiles()``.
    ///
    /// - Parameters:
    ///   - yaml: The configuration file's contents.
    ///   - baseDirectory: The directory relative file paths (`key-file`, `ca-file`, …) are resolved against.
    ///   - environment: Environment variables; only those named `PUSHFLEET__…` are used.
    /// - Throws: The first ``ConfigurationError`` found, naming the key (and line when known).
    public static func parse(
        yaml: String, baseDirectory: String, environment: [String: String]
    ) throws(ConfigurationError) -> PushFleetConfiguration {
        let fileRoot = try ConfigNode.parse(yaml: yaml)
        let root = try EnvironmentOverrides(environment: environment).apply(to: fileRoot)
        try ConfigurationSchema.root.validate(root, path: "")
        return try ConfigurationParser(baseDirectory: baseDirectory).configuration(from: root)
    }

    /// Reads the YAML file at `path`, parses it with ``parse(yaml:baseDirectory:environment:)`` (relative
    /// paths resolve against the file's directory), then checks the referenced files with
    /// ``validateFiles()``.
    ///
    /// - Throws: A ``ConfigurationError`` keyed `(file)` when the file is missing or unreadable, or
    ///   any error from parsing or file validation.
    public static func load(
        path: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> PushFleetConfiguration {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ConfigurationError(key: ConfigurationError.fileKey, message: "configuration file '\(path)' does not exist")
        }
        guard !isDirectory.boolValue else {
            throw ConfigurationError(key: ConfigurationError.fileKey, message: "configuration file '\(path)' is a directory")
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw ConfigurationError(key: ConfigurationError.fileKey, message: "cannot read configuration file '\(path)'")
        }
        guard let yaml = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(key: ConfigurationError.fileKey, message: "configuration file '\(path)' is not UTF-8 text")
        }
        let configuration = try parse(
            yaml: yaml, baseDirectory: url.deletingLastPathComponent().path, environment: environment)
        try configuration.validateFiles()
        return configuration
    }
}
