/// A JSON object that remembers the order of its keys.
///
/// APNs payloads are compared and measured as bytes, so a payload's keys are written back in the
/// order the producer sent them. Equality is order-sensitive. Keys are unique: setting an
/// existing key replaces its value in place; setting `nil` removes it.
public struct JSONObject: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    /// The keys in order.
    public private(set) var keys: [String]
    private var values: [String: JSONValue]

    /// An empty object.
    public init() {
        self.keys = []
        self.values = [:]
    }

    /// An object with the literal's keys in the literal's order; a repeated key keeps its first
    /// position and its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init()
        for (key, value) in elements {
            self[key] = value
        }
    }

    /// The value for `key`, or `nil` when the object has no such key.
    public subscript(key: String) -> JSONValue? {
        get { values[key] }
        set {
            if let newValue {
                if values.updateValue(newValue, forKey: key) == nil {
                    keys.append(key)
                }
            } else if values.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    /// The number of keys.
    public var count: Int { keys.count }

    /// Whether the object has no keys.
    public var isEmpty: Bool { keys.isEmpty }

    public func makeIterator() -> some IteratorProtocol<Element> {
        keys.lazy.map { (key: $0, value: values[$0]!) }.makeIterator()
    }
}
