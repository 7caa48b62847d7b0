/// An APNs device token, held as lowercase hexadecimal.
///
/// APNs tokens are opaque bytes; Apple hands them to apps as 32 bytes today but documents no
/// fixed length, so any non-empty even-length hex string up to ``maxHexLength`` is accepted.
public struct DeviceToken: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// 100 bytes: far above any token APNs has issued, low enough to bound a key in Redis.
    public static let maxHexLength = 200

    public let hex: String

    public init(hex: String) throws(DeviceTokenError) {
        guard !hex.isEmpty else { throw .empty }
        guard hex.utf8.count <= Self.maxHexLength else { throw .tooLong(hex.utf8.count) }
        guard hex.utf8.allSatisfy(\.isHexDigit) else { throw .notHex }
        guard hex.utf8.count.isMultiple(of: 2) else { throw .oddLength(hex.utf8.count) }
        self.hex = hex.lowercased()
    }

    public static func < (lhs: DeviceToken, rhs: DeviceToken) -> Bool { lhs.hex < rhs.hex }

    public var description: String { hex }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
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
