/// The configuration as a plain tree, converted from the YAML `Node` tree so environment overrides
/// can be applied and every value keeps its origin (file line or environment variable).
indirect enum ConfigNode: Sendable {
    case scalar(ConfigScalar, origin: ConfigOrigin)
    case mapping([ConfigEntry], origin: ConfigOrigin)
    case sequence([ConfigNode], origin: ConfigOrigin)

    /// Where this node was written.
    var origin: ConfigOrigin {
        switch self {
        case .scalar(_, let origin), .mapping(_, let origin), .sequence(_, let origin): origin
        }
    }

    /// Whether the node is a YAML null (`null`, `~` or empty), which counts as "not set".
    var isNull: Bool {
        if case .scalar(let scalar, _) = self { return scalar.kind == .null }
        return false
    }

    /// The node's type as used in "expected …, found …" messages.
    var article: String {
        switch self {
        case .scalar(let scalar, _): scalar.kind.article
        case .mapping: "a mapping"
        case .sequence: "a list"
        }
    }
}
