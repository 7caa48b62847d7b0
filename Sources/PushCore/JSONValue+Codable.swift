/// Codable conformance, for using a ``JSONValue`` inside other `Codable` types.
///
/// Foundation's `JSONDecoder` and `JSONEncoder` neither keep object key order nor write numbers
/// as they were read, and `JSONEncoder` escapes `/`. Where bytes matter (APNs payloads), parse
/// with ``JSONValue/init(parsing:)`` and write with ``JSONValue/compactData()`` instead.
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: JSONKey.self) {
            var object = JSONObject()
            for key in container.allKeys {
                object[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
            }
            self = .object(object)
        } else if var container = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !container.isAtEnd {
                elements.append(try container.decode(JSONValue.self))
            }
            self = .array(elements)
        } else {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int.self) {
                self = .number(JSONNumber(value))
            } else if let value = try? container.decode(Double.self), let number = JSONNumber(value) {
                self = .number(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let number):
            var container = encoder.singleValueContainer()
            if let exact = Int(number.text) {
                try container.encode(exact)
            } else {
                try container.encode(number.doubleValue)
            }
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements {
                try container.encode(element)
            }
        case .object(let object):
            var container = encoder.container(keyedBy: JSONKey.self)
            for (key, value) in object {
                try container.encode(value, forKey: JSONKey(stringValue: key))
            }
        }
    }
}
