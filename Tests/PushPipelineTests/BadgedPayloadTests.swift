import NIOCore
import PushCore
import Testing

@testable import PushPipeline

/// ``BadgedPayload``: each device's payload is the one JSON encoding would give with its number.
struct BadgedPayloadTests {
    static let notification = APNsPayload([
        "aps": ["alert": ["title": "Match day", "body": "badge: 1 \"badge\":1"], "badge": ["increment": 1], "sound": "default"],
        "badge": "a custom key named badge", "match": ["badge": 1],
    ])

    /// The payload encoded with `badge` in place of the rule.
    static func encoded(_ badge: Int?) -> String {
        var object = notification.object
        var aps = notification.aps!
        aps["badge"] = badge.map { .number(JSONNumber($0)) }
        object["aps"] = .object(aps)
        return String(decoding: APNsPayload(object).payloadData(), as: UTF8.self)
    }

    @Test(arguments: [0, 1, 9, 10, 99, 12_345, 65_535])
    func eachNumberGivesTheEncodedPayload(badge: Int) throws {
        let payload = try #require(BadgedPayload(Self.notification))
        #expect(String(buffer: payload.payload(badge: badge)) == Self.encoded(badge))
    }

    @Test func withoutBadgeLeavesTheKeyOut() throws {
        let payload = try #require(BadgedPayload(Self.notification))
        #expect(String(buffer: payload.withoutBadge) == Self.encoded(nil))
        #expect(!String(buffer: payload.withoutBadge).contains(#""aps":{"alert":{"title":"Match day","body":"badge: 1 \"badge\":1"},"badge""#))
    }

    @Test func aPayloadWithoutApsHasNone() {
        #expect(BadgedPayload(APNsPayload(["custom": 1])) == nil)
    }
}
