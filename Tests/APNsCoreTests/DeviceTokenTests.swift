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
