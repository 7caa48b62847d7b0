import NIOCore
import NIOHPACK
import Testing

@testable import APNs

/// The client's header blocks, decoded by NIOHPACK's decoder (an independent implementation).
@Suite("HPACK request encoder")
struct HPACKRequestEncoderTests {
    static func request(path: String, apnsID: String, authorization: String = "bearer " + String(repeating: "j", count: 180)) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":path", value: path, indexing: .nonIndexable)
        headers.add(name: ":authority", value: "api.sandbox.push.apple.com")
        headers.add(name: "authorization", value: authorization)
        headers.add(name: "apns-topic", value: "com.example.app")
        headers.add(name: "apns-push-type", value: "alert")
        headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
        headers.add(name: "x-secret", value: "never", indexing: .neverIndexed)
        return headers
    }

    static func pairs(_ headers: HPACKHeaders) -> [String] {
        headers.map { "\($0.name): \($0.value)" }
    }

    @Test("a connection's blocks decode to the headers given, in order; repeats shrink to indexes")
    func roundTrip() throws {
        var encoder = HPACKRequestEncoder()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var sizes: [Int] = []
        for n in 0..<5 {
            let headers = Self.request(path: "/3/device/\(n)abcdef", apnsID: "id-\(n)")
            var block = ByteBuffer()
            encoder.encode(headers, into: &block)
            sizes.append(block.readableBytes)
            let decoded = try decoder.decodeHeaders(from: &block)
            #expect(Self.pairs(decoded) == Self.pairs(headers))
        }
        // The first block carries the authorization, authority, topic and push type as
        // literals; later blocks name them by index.
        #expect(sizes[0] > 250)
        #expect(sizes[1] < sizes[0] - 200, "sizes \(sizes)")
        #expect(Set(sizes.dropFirst()).count == 1)
    }

    @Test("values that never repeat stay out of the table; never-indexed stays never-indexed")
    func literalKinds() throws {
        var encoder = HPACKRequestEncoder()
        var block = ByteBuffer()
        var headers = HPACKHeaders()
        headers.add(name: "apns-id", value: "abc", indexing: .nonIndexable)
        headers.add(name: "x-secret", value: "s", indexing: .neverIndexed)
        encoder.encode(headers, into: &block)
        // Literal without indexing, new name: 0x00; never indexed, new name: 0x10.
        #expect(block.getInteger(at: 0, as: UInt8.self) == 0x00)
        #expect(block.getInteger(at: 1 + 1 + 7 + 1 + 3, as: UInt8.self) == 0x10)
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        let decoded = try decoder.decodeHeaders(from: &block)
        #expect(Self.pairs(decoded) == ["apns-id: abc", "x-secret: s"])
        // Nothing entered the table: the next block references no dynamic entry.
        block.clear()
        encoder.encode(headers, into: &block)
        #expect(block.getInteger(at: 0, as: UInt8.self) == 0x00)
    }

    /// Encodes request `n`, checks that the decoder reads it back whole, and returns the block.
    static func exchange(_ n: Int, _ encoder: inout HPACKRequestEncoder, _ decoder: inout HPACKDecoder) throws -> [UInt8] {
        let headers = request(path: "/3/device/\(n)", apnsID: "id-\(n)")
        var block = ByteBuffer()
        encoder.encode(headers, into: &block)
        let sent = Array(block.readableBytesView)
        #expect(pairs(try decoder.decodeHeaders(from: &block)) == pairs(headers), "block \(n)")
        #expect(block.readableBytes == 0, "block \(n)")
        return sent
    }

    @Test("a smaller table size from the server is announced first and honoured")
    func tableSizeUpdate() throws {
        var encoder = HPACKRequestEncoder()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try Self.exchange(1, &encoder, &decoder)
        encoder.peerTableSizeChanged(0)
        #expect(try Self.exchange(2, &encoder, &decoder).first == 0x20)  // dynamic table size update to 0

        // A later increase is followed up to the default, never above it.
        encoder.peerTableSizeChanged(1 << 16)
        #expect(encoder.maxTableSize == HPACKRequestEncoder.defaultTableSize)
        #expect(try Self.exchange(3, &encoder, &decoder).first == 0x3f)  // size update to 4096 (0x20 | 31, then 4065)
    }

    @Test("a size lowered and raised again between two blocks announces both (RFC 7541 §4.2)")
    func loweredAndRaised() throws {
        var encoder = HPACKRequestEncoder()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try Self.exchange(1, &encoder, &decoder)
        encoder.peerTableSizeChanged(0)
        encoder.peerTableSizeChanged(4096)
        #expect(Array(try Self.exchange(2, &encoder, &decoder).prefix(4)) == [0x20, 0x3f, 0xe1, 0x1f])
        // The table was emptied: the third block must insert the repeating headers again.
        _ = try Self.exchange(3, &encoder, &decoder)
    }

    @Test("eviction keeps the encoder's table in step with the decoder's")
    func eviction() throws {
        var encoder = HPACKRequestEncoder()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        // A new 150-byte authorization every block and a constant topic: the table (4096 bytes)
        // fills after ~20 blocks and evicts from then on; a wrong index decodes to a wrong value.
        for n in 0..<200 {
            let authorization = "bearer " + String(repeating: Character(UnicodeScalar(UInt8(97 + n % 26))), count: 143) + "\(n)"
            let headers = Self.request(path: "/3/device/\(n)", apnsID: "id-\(n)", authorization: authorization)
            var block = ByteBuffer()
            encoder.encode(headers, into: &block)
            #expect(Self.pairs(try decoder.decodeHeaders(from: &block)) == Self.pairs(headers), "block \(n)")
        }
    }

    @Test("integers follow RFC 7541's examples (C.1)")
    func integers() {
        var buffer = ByteBuffer()
        HPACKRequestEncoder.writeInteger(10, prefixBits: 5, flags: 0, into: &buffer)
        #expect(Array(buffer.readableBytesView) == [0x0a])
        buffer.clear()
        HPACKRequestEncoder.writeInteger(1337, prefixBits: 5, flags: 0, into: &buffer)
        #expect(Array(buffer.readableBytesView) == [0x1f, 0x9a, 0x0a])
        buffer.clear()
        HPACKRequestEncoder.writeInteger(127, prefixBits: 7, flags: 0x80, into: &buffer)
        #expect(Array(buffer.readableBytesView) == [0xff, 0x00])
    }
}
