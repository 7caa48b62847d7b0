import APNsCore
import Testing

@Suite("Device token")
struct DeviceTokenTests {
    @Test("hex digits of either case are accepted and kept lowercase")
    func normalises() throws {
        #expect(try DeviceToken(hex: "0a1b2c3d4e5f6789").hex == "0a1b2c3d4e5f6789")
        #expect(try DeviceToken(hex: "0A1B2C3D4E5F6789").hex == "0a1b2c3d4e5f6789")
        #expect(try DeviceToken(hex: "ABCDEFabcdef0123") == DeviceToken(hex: "abcdefabcdef0123"))
        let longest = String(repeating: "F0", count: DeviceToken.maxHexLength / 2)
        #expect(try DeviceToken(hex: longest).hex == String(repeating: "f0", count: DeviceToken.maxHexLength / 2))
    }

    @Test("a token's bytes are its hex digits read in pairs, and make the same token again")
    func bytes() throws {
        #expect(try DeviceToken(hex: "00ff10a9").bytes == [0x00, 0xFF, 0x10, 0xA9])
        #expect(try DeviceToken(hex: "ABCDEF").bytes == [0xAB, 0xCD, 0xEF])
        // Every digit in either place of a byte.
        let every = (0..<16).map { UInt8($0 << 4 | (15 - $0)) }
        let token = try DeviceToken(bytes: every)
        #expect(token.hex == "0f1e2d3c4b5a69788796a5b4c3d2e1f0" && token.bytes == every)
        // A token whose hex is not a native string's contiguous bytes reads the same.
        let bridged = try DeviceToken(hex: String(Substring("xx0a1b2c3d").dropFirst(2)))
        #expect(bridged.bytes == [0x0A, 0x1B, 0x2C, 0x3D])
    }

    @Test(
        "anything else is refused with the reason",
        arguments: [
            ("", DeviceTokenError.empty),
            ("abcg", .notHex),
            ("ab cd", .notHex),
            ("0x1234", .notHex),
            ("ab\u{e9}", .notHex),
            ("abc", .oddLength(3)),
            (String(repeating: "a", count: DeviceToken.maxHexLength + 2), .tooLong(DeviceToken.maxHexLength + 2)),
        ])
    func refuses(input: String, error: DeviceTokenError) {
        #expect(throws: error) { try DeviceToken(hex: input) }
    }
}
