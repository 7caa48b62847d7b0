import PushCore

extension JSONValue {
    /// A copy with `value` at the object path `keys` (intermediate objects are created;
    /// `nil` removes the key).
    func setting(_ value: JSONValue?, at keys: [String]) -> JSONValue {
        guard let first = keys.first else { return value ?? .null }
        var object = objectValue ?? JSONObject()
        if keys.count == 1 {
            object[first] = value
        } else {
            object[first] = (object[first] ?? .object(JSONObject())).setting(value, at: Array(keys.dropFirst()))
        }
        return .object(object)
    }

    /// The value at the object path `keys`.
    func value(at keys: [String]) -> JSONValue? {
        keys.reduce(Optional(self)) { value, key in value?.objectValue?[key] }
    }

    /// The same value with every object's keys sorted and every number rewritten from its
    /// `Double`, for comparing what Foundation's coders keep: neither key order nor number text.
    var canonicalized: JSONValue {
        switch self {
        case .number(let number):
            return JSONNumber(number.doubleValue).map(JSONValue.number) ?? self
        case .array(let elements):
            return .array(elements.map(\.canonicalized))
        case .object(let object):
            var sorted = JSONObject()
            for key in object.keys.sorted() {
                sorted[key] = object[key]?.canonicalized
            }
            return .object(sorted)
        default:
            return self
        }
    }
}
