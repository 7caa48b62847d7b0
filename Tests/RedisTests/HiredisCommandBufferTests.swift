import Testing

@testable import Redis

@Suite("RESP encoding of commands (no server)")
struct HiredisCommandBufferTests {
    @Test func encodesEveryArgumentKindLengthPrefixed() {
        let buffer = HiredisCommandBuffer([
            ["SET", .bytes([0x00, 0x0D, 0x0A]), 1_234_567_890],
            ["GET", ""],
            ["ECHO", "ü", -5],
        ])
        let expected =
            "*3\r\n$3\r\nSET\r\n$3\r\n\0\r\n\r\n$10\r\n1234567890\r\n"
            + "*2\r\n$3\r\nGET\r\n$0\r\n\r\n"
            + "*3\r\n$4\r\nECHO\r\n$2\r\nü\r\n$2\r\n-5\r\n"
        #expect(buffer.count == 3)
        #expect(encoded(buffer) == Array(expected.utf8))
    }

    @Test func encodesLongArgumentsAndManyArguments() {
        let value = [UInt8](repeating: 0x41, count: 100_000)
        let arguments: [RedisArgument] = ["SADD", "set"] + (0..<12).map { .integer($0) }
        let buffer = HiredisCommandBuffer([["SET", "k", .bytes(value)], arguments])
        let bytes = encoded(buffer)
        let header = Array("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n".utf8)
        #expect(Array(bytes.prefix(header.count)) == header)
        let second = Array("\r\n*14\r\n$4\r\nSADD\r\n".utf8)
        #expect(Array(bytes[(header.count + value.count)...].prefix(second.count)) == second)
    }

    @Test func sizesEveryNumberExactly() {
        // Lengths and integers at the digit boundaries: the encoder sizes its buffer first.
        let value = [UInt8](repeating: 0x42, count: 10)
        let buffer = HiredisCommandBuffer([
            ["X", .integer(Int.min), .integer(Int.max), 9, 10, -9, -10, 0, .bytes(value), .bytes(Array(value.prefix(9)))]
        ])
        let expected =
            "*10\r\n$1\r\nX\r\n$20\r\n-9223372036854775808\r\n$19\r\n9223372036854775807\r\n"
            + "$1\r\n9\r\n$2\r\n10\r\n$2\r\n-9\r\n$3\r\n-10\r\n$1\r\n0\r\n"
            + "$10\r\nBBBBBBBBBB\r\n$9\r\nBBBBBBBBB\r\n"
        #expect(encoded(buffer) == Array(expected.utf8))
    }

    private func encoded(_ buffer: HiredisCommandBuffer) -> [UInt8] {
        buffer.withEncodedCommands { bytes, count in
            Array(UnsafeRawBufferPointer(start: bytes, count: count))
        }
    }
}
