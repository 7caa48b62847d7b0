import Yams

extension ConfigNode {
    /// Parses `yaml` into a tree; `nil` for an empty document.
    static func parse(yaml: String) throws(ConfigurationError) -> ConfigNode? {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch let error as YamlError {
            throw ConfigurationError(yamlError: error)
        } catch {
            throw ConfigurationError(key: ConfigurationError.fileKey, message: "invalid YAML")
        }
        guard let root else { return nil }
        return try ConfigNode(yaml: root, path: "")
    }

    /// Converts a Yams node at dotted `path` (used for errors about non-scalar keys and aliases).
    init(yaml node: Node, path: String) throws(ConfigurationError) {
        let origin = ConfigOrigin.file(line: node.mark?.line)
        switch node {
        case .scalar(let scalar):
            self = .scalar(ConfigScalar(text: scalar.string, kind: ConfigScalarKind(tag: Resolver.default.resolveTag(of: node))), origin: origin)
        case .sequence(let sequence):
            var items: [ConfigNode] = []
            for (index, item) in sequence.enumerated() {
                items.append(try ConfigNode(yaml: item, path: "\(path.isEmpty ? "" : path)[\(index)]"))
            }
            self = .sequence(items, origin: origin)
        case .mapping(let mapping):
            var entries: [ConfigEntry] = []
            for (key, value) in mapping {
                guard case .scalar(let keyScalar) = key else {
                    throw ConfigurationError(
                        key: path.isEmpty ? ConfigurationError.fileKey : path,
                        message: "mapping keys must be plain strings", origin: .file(line: key.mark?.line))
                }
                let keyPath = ConfigurationSchema.join(path, keyScalar.string)
                entries.append(
                    ConfigEntry(
                        key: keyScalar.string, keyOrigin: .file(line: key.mark?.line),
                        value: try ConfigNode(yaml: value, path: keyPath)))
            }
            self = .mapping(entries, origin: origin)
        case .alias:
            throw ConfigurationError(
                key: path.isEmpty ? ConfigurationError.fileKey : path,
                message: "YAML aliases are not supported", origin: origin)
        }
    }
}
