import Foundation

extension JSONValue {
    /// Parses a JSON text (RFC 8259), keeping object key order and number text.
    ///
    /// Rejects, beyond RFC 8259, objects that repeat a key and nesting deeper than 256 levels.
    public init(parsing data: Data) throws(JSONSyntaxError) {
        var parser = JSONParser(data)
        self = try parser.parseDocument()
    }

    /// The compact JSON text of this value: no whitespace, keys in order, numbers as written,
    /// strings escaped minimally (only `"`, `\` and control characters; `/` and non-ASCII
    /// characters are written as UTF-8). This is the form sent to APNs and measured against
    /// its payload limit.
    public func compactData() -> Data {
        var output: [UInt8] = []
        write(to: &output)
        return Data(output)
    }

    /// The number of bytes of ``compactData()``.
    public var compactByteCount: Int {
        var output: [UInt8] = []
        write(to: &output)
        return output.count
    }

    private func write(to output: inout [UInt8]) {
        switch self {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let value):
            output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let number):
            output.append(contentsOf: number.text.utf8)
        case .string(let value):
            Self.writeString(value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (offset, member) in object.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                member.value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Most strings (tokens, ids, keys) need no escape: copied whole.
        let plain = string.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                return false
            }
            output.append(contentsOf: bytes)
            return true
        }
        if plain == true {
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x08: output.append(contentsOf: #"\b"#.utf8)
            case 0x0C: output.append(contentsOf: #"\f"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default:
                output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
