/// An APNs device token, held as lowercase hexadecimal.
///
/// APNs tokens are opaque bytes; Apple hands them to apps as 32 bytes today but documents no
/// fixed length, so any non-empty even-length hex string up to ``maxHexLength`` is accepted.
public struct DeviceToken: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// 100 bytes: far above any token APNs has issued, low enough to bound a key in Redis.
    public static let maxHexLength = 200

    public let hex: String

    public init(hex: String) throws(DeviceTokenError) {
        let length = hex.utf8.count
        guard length > 0 else { throw .empty }
        guard length <= Self.maxHexLength else { throw .tooLong(length) }
        // One pass over the bytes, and no copy for the usual lowercase token: this runs for
        // every token of every delivery chunk.
        // A native string's bytes are contiguous: read as a buffer, not through the UTF-8 view.
        var kinds: UInt8 = 0
        if let seen = hex.utf8.withContiguousStorageIfAvailable({ Self.hexKinds(of: $0) }) {
            kinds = seen
        } else {
            kinds = Self.hexKinds(of: Array(hex.utf8))
        }
        guard kinds & Self.notHex == 0 else { throw .notHex }
        let hasUppercase = kinds & Self.uppercaseHex != 0
        guard length.isMultiple(of: 2) else { throw .oddLength(length) }
        // Setting bit 0x20 lowercases A-F and leaves digits and a-f as they are.
        self.hex = hasUppercase ? String(decoding: hex.utf8.map { $0 | 0x20 }, as: UTF8.self) : hex
    }

    public static func < (lhs: DeviceToken, rhs: DeviceToken) -> Bool { lhs.hex < rhs.hex }

    private static let notHex: UInt8 = 1
    private static let uppercaseHex: UInt8 = 2

    /// What kinds of byte `bytes` hold, or-ed: ``notHex``, ``uppercaseHex``, or 0 for
    /// digits and a-f only.
    private static func hexKinds(of bytes: UnsafeBufferPointer<UInt8>) -> UInt8 {
        var kinds: UInt8 = 0
        for byte in bytes {
            kinds |= hexKind[Int(byte)]
        }
        return kinds
    }

    private static func hexKinds(of bytes: [UInt8]) -> UInt8 {
        bytes.withUnsafeBufferPointer { hexKinds(of: $0) }
    }

    /// The kind of every byte value: 0 for 0-9 and a-f, ``uppercaseHex`` for A-F, ``notHex``
    /// for the rest.
    private static let hexKind: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): 0
        case UInt8(ascii: "A")...UInt8(ascii: "F"): uppercaseHex
        default: notHex
        }
    }

    public var description: String { hex }
}

extension DeviceToken: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        do {
            try self.init(hex: raw)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
