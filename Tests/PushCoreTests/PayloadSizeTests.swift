import APNsCore
import Foundation
import PushCore
import Testing

/// The payload limit applies to the compact UTF-8 bytes sent to APNs: 4096, or 5120 for voip.
struct PayloadSizeTests {
    /// A notification of exactly `size` compact bytes, padded with `filler` (1 or 2 UTF-8 bytes).
    static func notification(size: Int, filler: Character) -> JSONValue {
        let skeleton: JSONObject = ["aps": ["alert": "Hello"], "padding": ""]
        let room = size - JSONValue.object(skeleton).compactByteCount
        let fillerBytes = filler.utf8.count
        let padding =
            String(repeating: filler, count: room / fillerBytes)
            + String(repeating: "x", count: room % fillerBytes)
        var object = skeleton
        object["padding"] = .string(padding)
        return .object(object)
    }

    static let cases: [(pushType: String, size: Int, filler: Character, accepted: Bool)] = [
        ("alert", 4096, "x", true),
        ("alert", 4097, "x", false),
        ("alert", 4096, "é", true),
        ("alert", 4097, "é", false),
        ("background", 4097, "x", false),
        ("liveactivity", 5120, "x", false),
        ("voip", 5120, "x", true),
        ("voip", 5121, "x", false),
        ("voip", 5120, "🚀", true),
        ("voip", 5121, "🚀", false),
    ]

    @Test(arguments: cases)
    func limit(pushType: String, size: Int, filler: Character, accepted: Bool) throws {
        let notification = Self.notification(size: size, filler: filler)
        var json = Fixtures.job
            .setting(notification, at: ["notification"])
            .setting(.string(pushType), at: ["headers", "push-type"])
        if pushType == "background" {
            json = json.setting(5, at: ["headers", "priority"])
        }
        let error = Fixtures.rejection(json)
        if accepted {
            #expect(error == nil)
            let job = try Fixtures.decode(json)
            #expect(job.notification.payloadData().count == size)
            #expect(job.notification.byteCount == size)
        } else {
            #expect(error?.field == "notification")
            #expect(error?.code == .payloadTooLarge)
            #expect(error?.message.contains("\(size) bytes") == true)
        }
    }

    @Test func sizeIsMeasuredOnTheCompactFormNotTheFile() throws {
        // Pretty-printing the job file adds whitespace that never reaches APNs.
        let notification = Self.notification(size: 4096, filler: "x")
        let pretty = Fixtures.job.setting(notification, at: ["notification"]).compactData()
            .reduce(into: Data()) { data, byte in
                data.append(byte)
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: ":") { data.append(contentsOf: "\n    ".utf8) }
            }
        #expect(throws: Never.self) { try PushJob.decodeAndValidate(from: pretty) }
    }

    @Test func escapesCountAsTheyAreSent() {
        // `"` and `\` are sent as two bytes, a newline as `\n`, U+0001 as `\u0001`; `/` as is.
        let payload = APNsPayload(["aps": [:], "s": "\"\\\n\u{01}/é"])
        let expected = #"{"aps":{},"s":"\"\\\n\u0001/é"}"#
        #expect(String(decoding: payload.payloadData(), as: UTF8.self) == expected)
        #expect(payload.byteCount == expected.utf8.count)
    }
}
