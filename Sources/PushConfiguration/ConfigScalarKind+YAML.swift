import Yams

extension ConfigScalarKind {
    /// The kind for a resolved Yams tag; unrecognised tags (timestamps, custom tags) count as strings.
    init(tag: Tag.Name) {
        switch tag {
        case .null: self = .null
        case .bool: self = .bool
        case .int: self = .int
        case .float: self = .float
        default: self = .string
        }
    }

    /// The kind YAML gives `text` written as a plain (unquoted) scalar.
    init(plain text: String) {
        self.init(tag: Resolver.default.resolveTag(of: Node(text)))
    }
}
