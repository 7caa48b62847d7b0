/// The resolved YAML type of a scalar (YAML 1.1 core resolution, as Yams implements it).
enum ConfigScalarKind: Sendable, Equatable {
    case null
    case bool
    case int
    case float
    case string

    /// The kind as used in "expected …, found …" messages.
    var article: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int: "an integer"
        case .float: "a floating-point number"
        case .string: "a string"
        }
    }
}
