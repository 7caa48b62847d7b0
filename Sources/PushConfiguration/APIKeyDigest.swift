/// The SHA-256 digest of one of an app's API keys, as written in the configuration:
/// `sha256:<64 lowercase or uppercase hex digits>`. Keys themselves are never stored.
public struct APIKeyDigest: Sendable, Hashable, CustomStringConvertible {
    /// The 32 bytes of the digest.
    public let bytes: [UInt8]

    /// Parses `sha256:<64 hex>`; nil when `text` is not of that form.
    public init?(_ text: String) {
        let prefix = "sha256:"
        guard text.hasPrefix(prefix) else { return nil }
        let hex = Array(text.utf8.dropFirst(prefix.utf8.count))
        guard hex.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = Self.nibble(hex[index]), let low = Self.nibble(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    /// Wraps a 32-byte digest.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// `sha256:<64 lowercase hex>`
    public var description: String {
        "sha256:"
            + bytes.map { byte in
                let digits = Array("0123456789abcdef".utf8)
                return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
            }.joined()
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
