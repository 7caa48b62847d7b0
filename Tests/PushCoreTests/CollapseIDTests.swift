import PushCore
import Testing

/// `collapse-id` is limited to 64 bytes of UTF-8, not 64 characters.
struct CollapseIDTests {
    static let cases: [(collapseID: String, accepted: Bool)] = [
        (String(repeating: "a", count: 64), true),
        (String(repeating: "a", count: 65), false),
        (String(repeating: "é", count: 32), true),  // 32 characters, 64 bytes
        (String(repeating: "é", count: 33), false),  // 33 characters, 66 bytes
        (String(repeating: "a", count: 63) + "é", false),  // 64 characters, 65 bytes
        (String(repeating: "🚀", count: 16), true),  // 16 characters, 64 bytes
        (String(repeating: "🚀", count: 17), false),  // 17 characters, 68 bytes
        ("€", true),
    ]

    @Test(arguments: cases)
    func byteLimit(collapseID: String, accepted: Bool) {
        let error = Fixtures.rejection(Fixtures.job.setting(.string(collapseID), at: ["headers", "collapse-id"]))
        if accepted {
            #expect(error == nil)
        } else {
            #expect(error?.field == "headers.collapse-id")
            #expect(error?.code == .collapseIDTooLong)
            #expect(error?.message.contains("\(collapseID.utf8.count) bytes") == true)
        }
    }
}
