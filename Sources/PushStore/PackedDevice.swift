import APNsCore

/// One device as the registry stores it: a few bytes, the value of the device's field (its
/// binary token) in its shard's bucket hash (`schemas/redis.md`). Encoded and decoded only here;
/// the scripts compare and replace the bytes without reading them, except for the id, which a
/// script writes into a new device's record at ``idOffset``, and an openid binding's
/// generation, at ``generationOffset``.
///
/// Layout, little-endian: version (1 byte, 1) · flags (1: bit 0 production, bit 1 suspect,
/// bit 2 openid) · id (4) · registered-at ms (6) · tag count (1) and tag ids (2 each) · when
/// openid: its length (1), its UTF-8 bytes, generation (4) · when suspect: the reason's length
/// (1), its UTF-8 bytes, since ms (6). A device with one tag and no openid takes 15 bytes.
struct PackedDevice: Hashable, Sendable {
    var id: UInt32
    var environment: APNsEnvironment
    /// Milliseconds since 1970 (48 bits).
    var registeredAt: Int64
    /// The device's tags as the app's tag ids, sorted, without duplicates.
    var tags: [UInt16]
    var openID: String?
    /// The openid binding's generation (0 without an openid).
    var generation: UInt32
    var suspicion: DeviceSuspicion?

    static let version: UInt8 = 1
    /// Where the id starts.
    static let idOffset = 2
    /// The most tags a device carries (the count is one byte).
    static let maxTags = 255

    init(
        id: UInt32 = 0, environment: APNsEnvironment, registeredAt: Int64, tags: [UInt16] = [], openID: String? = nil,
        generation: UInt32 = 0, suspicion: DeviceSuspicion? = nil
    ) {
        self.id = id
        self.environment = environment
        self.registeredAt = registeredAt
        self.tags = Array(Set(tags)).sorted()
        self.openID = openID
        self.generation = generation
        self.suspicion = suspicion
    }

    /// Where the openid binding's generation starts; `nil` without an openid.
    var generationOffset: Int? {
        guard let openID else { return nil }
        return 13 + 2 * tags.count + 1 + openID.utf8.count
    }

    var bytes: [UInt8] {
        var out: [UInt8] = [Self.version]
        var flags: UInt8 = environment == .production ? 1 : 0
        if suspicion != nil { flags |= 2 }
        if openID != nil { flags |= 4 }
        out.append(flags)
        Self.append(UInt64(id), width: 4, to: &out)
        Self.append(UInt64(max(registeredAt, 0)), width: 6, to: &out)
        out.append(UInt8(min(tags.count, Self.maxTags)))
        for tag in tags.prefix(Self.maxTags) {
            Self.append(UInt64(tag), width: 2, to: &out)
        }
        if let openID {
            let utf8 = Array(openID.utf8.prefix(255))
            out.append(UInt8(utf8.count))
            out += utf8
            Self.append(UInt64(generation), width: 4, to: &out)
        }
        if let suspicion {
            let utf8 = Array(suspicion.reason.utf8.prefix(255))
            out.append(UInt8(utf8.count))
            out += utf8
            Self.append(UInt64(max(suspicion.since, 0)), width: 6, to: &out)
        }
        return out
    }

    /// Decodes a stored record; `nil` when the bytes are not a record of this version.
    init?(bytes: [UInt8]) {
        var reader = Reader(bytes: bytes)
        guard reader.byte() == Self.version, let flags = reader.byte(), let id = reader.integer(width: 4),
            let registeredAt = reader.integer(width: 6), let tagCount = reader.byte()
        else { return nil }
        var tags: [UInt16] = []
        for _ in 0..<tagCount {
            guard let tag = reader.integer(width: 2) else { return nil }
            tags.append(UInt16(tag))
        }
        var openID: String?
        var generation: UInt32 = 0
        if flags & 4 != 0 {
            guard let length = reader.byte(), let text = reader.bytes(Int(length)), let value = reader.integer(width: 4) else { return nil }
            openID = String(decoding: text, as: UTF8.self)
            generation = UInt32(value)
        }
        var suspicion: DeviceSuspicion?
        if flags & 2 != 0 {
            guard let length = reader.byte(), let text = reader.bytes(Int(length)), let since = reader.integer(width: 6) else { return nil }
            suspicion = DeviceSuspicion(reason: String(decoding: text, as: UTF8.self), since: Int64(since))
        }
        guard reader.isAtEnd else { return nil }
        self.init(
            id: UInt32(id), environment: flags & 1 != 0 ? .production : .sandbox, registeredAt: Int64(registeredAt), tags: tags,
            openID: openID, generation: generation, suspicion: suspicion)
    }

    private static func append(_ value: UInt64, width: Int, to out: inout [UInt8]) {
        for shift in 0..<width {
            out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(shift))))
        }
    }

    /// Reads little-endian fields from the front of `bytes` (a record, or the ids the
    /// apply-patches script answers).
    struct Reader {
        let bytes: [UInt8]
        var position = 0

        var isAtEnd: Bool { position == bytes.count }

        mutating func byte() -> UInt8? {
            guard position < bytes.count else { return nil }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func bytes(_ count: Int) -> [UInt8]? {
            guard position + count <= bytes.count else { return nil }
            defer { position += count }
            return Array(bytes[position..<(position + count)])
        }

        mutating func integer(width: Int) -> UInt64? {
            guard let slice = bytes(width) else { return nil }
            return slice.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        }
    }
}
