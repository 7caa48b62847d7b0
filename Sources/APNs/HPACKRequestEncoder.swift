import NIOCore
import NIOHPACK

/// Encodes the header blocks of one connection's requests (RFC 7541).
///
/// APNs requests repeat a few values on every stream (`:authority`, `authorization`,
/// `apns-topic`, `apns-push-type`) and carry a few that never repeat (`:path`, `apns-id`). A
/// header marked ``HPACKIndexing/indexable`` goes into the dynamic table the first time and is
/// sent as a one- or two-byte index afterwards; the others are literals that stay out of the
/// table, so they never evict the repeating ones.
///
/// Strings are sent without Huffman coding: it would save about a quarter of the bytes of the
/// two non-repeating values and costs more CPU than the rest of the encoding together.
///
/// The encoder's table mirrors the peer's decoder, so one encoder serves one connection and
/// encodes its blocks in the order they are sent.
struct HPACKRequestEncoder {
    /// The table size every HTTP/2 peer starts with (SETTINGS_HEADER_TABLE_SIZE).
    static let defaultTableSize = 4096

    private struct Entry {
        var name: String
        var value: String
        var size: Int
    }

    /// Oldest first; the newest entry has dynamic index 62.
    private var entries: [Entry] = []
    private var size = 0
    private(set) var maxTableSize = HPACKRequestEncoder.defaultTableSize
    /// The smallest table size since the last block, when the size changed: the next block
    /// starts by announcing it, then the current size if that differs (RFC 7541 §4.2).
    private var smallestPendingSize: Int?

    /// The peer's SETTINGS_HEADER_TABLE_SIZE: the most the table may hold. The encoder uses at
    /// most the default, so only a smaller setting changes anything.
    mutating func peerTableSizeChanged(_ peerSize: Int) {
        let newSize = min(peerSize, Self.defaultTableSize)
        guard newSize != maxTableSize else { return }
        maxTableSize = newSize
        smallestPendingSize = min(smallestPendingSize ?? newSize, newSize)
        evict(toFit: 0)
    }

    /// Appends the header block for `headers` to `buffer`.
    mutating func encode(_ headers: HPACKHeaders, into buffer: inout ByteBuffer) {
        if let smallest = smallestPendingSize {
            smallestPendingSize = nil
            Self.writeInteger(smallest, prefixBits: 5, flags: 0x20, into: &buffer)
            if smallest != maxTableSize {
                Self.writeInteger(maxTableSize, prefixBits: 5, flags: 0x20, into: &buffer)
            }
        }
        for (name, value, indexing) in headers {
            if let index = Self.staticIndex(name: name, value: value) {
                Self.writeInteger(index, prefixBits: 7, flags: 0x80, into: &buffer)
                continue
            }
            switch indexing {
            case .indexable:
                if let index = dynamicIndex(name: name, value: value) {
                    Self.writeInteger(index, prefixBits: 7, flags: 0x80, into: &buffer)
                } else {
                    let entrySize = name.utf8.count + value.utf8.count + 32
                    if entrySize <= maxTableSize {
                        Self.writeLiteral(name: name, value: value, prefixBits: 6, flags: 0x40, into: &buffer)
                        insert(Entry(name: name, value: value, size: entrySize))
                    } else {
                        Self.writeLiteral(name: name, value: value, prefixBits: 4, flags: 0x00, into: &buffer)
                    }
                }
            case .nonIndexable:
                Self.writeLiteral(name: name, value: value, prefixBits: 4, flags: 0x00, into: &buffer)
            case .neverIndexed:
                Self.writeLiteral(name: name, value: value, prefixBits: 4, flags: 0x10, into: &buffer)
            }
        }
    }

    private func dynamicIndex(name: String, value: String) -> Int? {
        var position = entries.count - 1
        while position >= 0 {
            let entry = entries[position]
            if entry.value == value, entry.name == name {
                return 62 + (entries.count - 1 - position)
            }
            position -= 1
        }
        return nil
    }

    private mutating func insert(_ entry: Entry) {
        evict(toFit: entry.size)
        entries.append(entry)
        size += entry.size
    }

    private mutating func evict(toFit incoming: Int) {
        var dropped = 0
        while size + incoming > maxTableSize, dropped < entries.count {
            size -= entries[dropped].size
            dropped += 1
        }
        if dropped > 0 { entries.removeFirst(dropped) }
    }

    /// The static table's full (name, value) matches a request uses.
    private static func staticIndex(name: String, value: String) -> Int? {
        switch (name, value) {
        case (":method", "GET"): 2
        case (":method", "POST"): 3
        case (":path", "/"): 4
        case (":scheme", "http"): 6
        case (":scheme", "https"): 7
        default: nil
        }
    }

    /// The static table's index for a name, for the request headers that have one.
    private static func staticNameIndex(_ name: String) -> Int {
        switch name {
        case ":authority": 1
        case ":method": 2
        case ":path": 4
        case ":scheme": 6
        case "authorization": 23
        case "content-length": 28
        case "content-type": 31
        default: 0
        }
    }

    private static func writeLiteral(
        name: String, value: String, prefixBits: Int, flags: UInt8, into buffer: inout ByteBuffer
    ) {
        let nameIndex = staticNameIndex(name)
        writeInteger(nameIndex, prefixBits: prefixBits, flags: flags, into: &buffer)
        if nameIndex == 0 { writeString(name, into: &buffer) }
        writeString(value, into: &buffer)
    }

    /// A string literal without Huffman coding.
    private static func writeString(_ string: String, into buffer: inout ByteBuffer) {
        writeInteger(string.utf8.count, prefixBits: 7, flags: 0, into: &buffer)
        buffer.writeString(string)
    }

    /// An HPACK integer (RFC 7541 §5.1) in the low `prefixBits` bits of a byte whose high bits
    /// are `flags`.
    static func writeInteger(_ value: Int, prefixBits: Int, flags: UInt8, into buffer: inout ByteBuffer) {
        let limit = (1 << prefixBits) - 1
        if value < limit {
            buffer.writeInteger(flags | UInt8(value))
            return
        }
        buffer.writeInteger(flags | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            buffer.writeInteger(UInt8(truncatingIfNeeded: rest & 0x7f) | 0x80)
            rest >>= 7
        }
        buffer.writeInteger(UInt8(rest))
    }
}
