/// A Redis Cluster hash slot, `0..<16384`: the CRC16 (XMODEM) of a key's hash tag (the bytes
/// between the first `{` and the first `}` after it, when there are any) or else of the whole
/// key, modulo 16,384. Keys with the same hash tag share a slot, so one script or pipeline step
/// may touch them together.
public struct RedisHashSlot: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The number of slots of a cluster.
    public static let count = 16_384

    public let rawValue: UInt16

    /// The slot numbered `rawValue`; `nil` outside `0..<16384`.
    public init?(rawValue: Int) {
        guard (0..<Self.count).contains(rawValue) else { return nil }
        self.rawValue = UInt16(rawValue)
    }

    /// The slot of a key given as bytes.
    public init(key: some Collection<UInt8>) {
        rawValue = Self.crc16(Self.hashedPart(of: key)) & UInt16(Self.count - 1)
    }

    /// The slot of a key given as text (its UTF-8 bytes).
    public init(key: String) {
        var key = key
        self = key.withUTF8 { RedisHashSlot(key: $0) }
    }

    /// The slot of a command argument used as a key.
    public init(key: RedisArgument) {
        switch key {
        case .bytes(let bytes): self.init(key: bytes)
        case .string(let string): self.init(key: string)
        case .integer(let value): self.init(key: String(value))
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { String(rawValue) }

    /// The bytes that are hashed: the hash tag when the key has a non-empty one, else the key.
    static func hashedPart<Key: Collection<UInt8>>(of key: Key) -> Key.SubSequence {
        guard let open = key.firstIndex(of: UInt8(ascii: "{")) else { return key[...] }
        let afterOpen = key.index(after: open)
        guard let close = key[afterOpen...].firstIndex(of: UInt8(ascii: "}")), close != afterOpen else { return key[...] }
        return key[afterOpen..<close]
    }

    /// CRC16/XMODEM (polynomial 0x1021, initial value 0), as Redis computes it.
    static func crc16(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        return crc
    }

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 {
            crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
        }
        return crc
    }
}
