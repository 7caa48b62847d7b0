/// Checks that a payload is well-formed JSON (RFC 8259: no trailing commas, no leading zeros)
/// whose top level is an object with an `aps` object, without building the document (the
/// simulator does this for every request).
struct APNsSimulatorPayloadChecker {
    private static let maxDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    /// Whether `bytes` is a JSON object with an `aps` member that is an object.
    static func isAPSPayload(_ bytes: [UInt8]) -> Bool {
        var checker = APNsSimulatorPayloadChecker(bytes: bytes)
        guard let hasAPS = checker.topLevelObject() else { return false }
        checker.skipWhitespace()
        return hasAPS && checker.index == bytes.count
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses the top-level object; `nil` if malformed, else whether `aps` is an object.
    private mutating func topLevelObject() -> Bool? {
        skipWhitespace()
        guard consume(UInt8(ascii: "{")) else { return nil }
        var hasAPS = false
        skipWhitespace()
        if consume(UInt8(ascii: "}")) { return false }
        repeat {
            skipWhitespace()
            guard let key = string() else { return nil }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { return nil }
            skipWhitespace()
            let isObject = peek == UInt8(ascii: "{")
            guard value() else { return nil }
            if key.elementsEqual("aps".utf8) { hasAPS = isObject }
            skipWhitespace()
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "}")) ? hasAPS : nil
    }

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipWhitespace() {
        while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func value() -> Bool {
        guard let byte = peek else { return false }
        switch byte {
        case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), keyed: true)
        case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), keyed: false)
        case UInt8(ascii: "\""): return string() != nil
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number()
        }
    }

    private mutating func container(close: UInt8, keyed: Bool) -> Bool {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { return false }
        index += 1
        skipWhitespace()
        if consume(close) { return true }
        repeat {
            skipWhitespace()
            if keyed {
                guard string() != nil else { return false }
                skipWhitespace()
                guard consume(UInt8(ascii: ":")) else { return false }
                skipWhitespace()
            }
            guard value() else { return false }
            skipWhitespace()
        } while consume(UInt8(ascii: ","))
        return consume(close)
    }

    /// A string's raw bytes (escapes validated, not decoded).
    private mutating func string() -> ArraySlice<UInt8>? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while let byte = peek {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return bytes[start..<(index - 1)]
            case UInt8(ascii: "\\"):
                index += 1
                guard let escaped = peek else { return nil }
                if escaped == UInt8(ascii: "u") {
                    guard index + 4 < bytes.count,
                        bytes[(index + 1)...(index + 4)].allSatisfy({ $0.isHexDigit })
                    else { return nil }
                    index += 5
                } else {
                    guard Array(#""\/bfnrt"#.utf8).contains(escaped) else { return nil }
                    index += 1
                }
            case 0x00..<0x20:
                return nil
            default:
                index += 1
            }
        }
        return nil
    }

    private mutating func literal(_ word: String) -> Bool {
        for byte in word.utf8 {
            guard consume(byte) else { return false }
        }
        return true
    }

    private mutating func number() -> Bool {
        _ = consume(UInt8(ascii: "-"))
        // No leading zeros: "0" or a non-zero digit followed by digits.
        if consume(UInt8(ascii: "0")) {
            if let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { return false }
        } else {
            guard digits() else { return false }
        }
        if consume(UInt8(ascii: ".")) { guard digits() else { return false } }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
            guard digits() else { return false }
        }
        return true
    }

    private mutating func digits() -> Bool {
        let start = index
        while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
        return index > start
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
