/// Where a value sits in a push job, written the way errors report it: `headers.collapse-id`,
/// `audience.tokens[3]`, `notification.aps.alert.loc-args[0]`; `$` for the document itself.
///
/// Keys that would be ambiguous in dotted form (empty, or containing `.`, `[`, `]`, `"` or
/// whitespace) are written as `["key"]`.
struct FieldPath: Hashable, Sendable, CustomStringConvertible {
    static let root = FieldPath(rendered: "")

    private let rendered: String

    private init(rendered: String) {
        self.rendered = rendered
    }

    /// The path of member `key` of the object at this path.
    func key(_ key: String) -> FieldPath {
        let plain =
            !key.isEmpty
            && !key.unicodeScalars.contains {
                $0 == "." || $0 == "[" || $0 == "]" || $0 == "\"" || $0.properties.isWhitespace
            }
        if plain {
            return FieldPath(rendered: rendered.isEmpty ? key : rendered + "." + key)
        }
        let quoted = String(decoding: JSONValue.string(key).compactData(), as: UTF8.self)
        return FieldPath(rendered: rendered + "[" + quoted + "]")
    }

    /// The path of element `index` of the array at this path.
    func index(_ index: Int) -> FieldPath {
        FieldPath(rendered: rendered + "[\(index)]")
    }

    var description: String { rendered.isEmpty ? "$" : rendered }
}

extension FieldPath {
    /// The path a `Decoder`'s coding path denotes, for models decoded through `Codable`.
    init(codingPath: [any CodingKey]) {
        self = codingPath.reduce(.root) { path, key in
            key.intValue.map(path.index) ?? path.key(key.stringValue)
        }
    }
}
