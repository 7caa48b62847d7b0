import PushCore
import Testing

/// `aps.alert` and `aps.sound` each come as a string or a dictionary.
struct AlertAndSoundTests {
    static func payload(aps: JSONValue) throws -> APNsPayload {
        try Fixtures.decode(Fixtures.job.setting(aps, at: ["notification", "aps"])).notification
    }

    @Test func alertString() throws {
        let payload = try Self.payload(aps: ["alert": "Hi there"])
        #expect(payload.alert == .text("Hi there"))
    }

    @Test func alertDictionary() throws {
        let payload = try Self.payload(aps: [
            "alert": [
                "title": "T", "subtitle": "S", "body": "B", "launch-image": "L.png",
                "title-loc-key": "TK", "title-loc-args": ["t1"], "subtitle-loc-key": "SK", "subtitle-loc-args": [],
                "loc-key": "K", "loc-args": ["a", "b"], "summary-arg": "kept",
            ]
        ])
        guard case .dictionary(let alert) = payload.alert else {
            Issue.record("expected an alert dictionary, got \(String(describing: payload.alert))")
            return
        }
        #expect(alert.title == "T")
        #expect(alert.subtitle == "S")
        #expect(alert.body == "B")
        #expect(alert.launchImage == "L.png")
        #expect(alert.titleLocKey == "TK")
        #expect(alert.titleLocArgs == ["t1"])
        #expect(alert.subtitleLocKey == "SK")
        #expect(alert.subtitleLocArgs == [])
        #expect(alert.locKey == "K")
        #expect(alert.locArgs == ["a", "b"])
        #expect(payload.aps?["alert"]?.objectValue?["summary-arg"] == "kept")
    }

    @Test func soundString() throws {
        let payload = try Self.payload(aps: ["alert": "Hi", "sound": "default"])
        #expect(payload.sound == .named("default"))
    }

    @Test func soundDictionary() throws {
        let sound: JSONValue = ["critical": 1, "name": "alarm.caf", "volume": 0.25]
        let payload = try Self.payload(aps: ["alert": "Hi", "sound": sound])
        guard case .dictionary(let sound) = payload.sound else {
            Issue.record("expected a sound dictionary, got \(String(describing: payload.sound))")
            return
        }
        #expect(sound.isCritical)
        #expect(sound.name == "alarm.caf")
        #expect(sound.volume == 0.25)
    }

    @Test func badgeAndContentAvailable() throws {
        let payload = try Self.payload(aps: ["badge": 7, "content-available": 1])
        #expect(payload.badge == 7)
        #expect(payload.isContentAvailable)
        #expect(try Self.payload(aps: ["alert": "x"]).isContentAvailable == false)
    }

    static let rejections: [(aps: JSONValue, field: String, code: MessageValidationError.Code)] = [
        (["alert": 42], "notification.aps.alert", .invalidType),
        (["alert": ["hello"]], "notification.aps.alert", .invalidType),
        (["alert": ["title": 1]], "notification.aps.alert.title", .invalidType),
        (["alert": ["loc-args": "a"]], "notification.aps.alert.loc-args", .invalidType),
        (["alert": ["loc-args": ["a", 2]]], "notification.aps.alert.loc-args[1]", .invalidType),
        (["alert": ["title-loc-args": [nil]]], "notification.aps.alert.title-loc-args[0]", .invalidType),
        (["sound": true], "notification.aps.sound", .invalidType),
        (["sound": ["critical": 1]], "notification.aps.sound.name", .missingField),
        (["sound": ["name": "a", "critical": 2]], "notification.aps.sound.critical", .invalidValue),
        (["sound": ["name": "a", "volume": -0.1]], "notification.aps.sound.volume", .invalidValue),
        (["sound": ["name": "a", "volume": "loud"]], "notification.aps.sound.volume", .invalidType),
    ]

    @Test(arguments: rejections)
    func rejection(aps: JSONValue, field: String, code: MessageValidationError.Code) {
        let error = Fixtures.rejection(Fixtures.job.setting(aps, at: ["notification", "aps"]))
        #expect(error?.field == field)
        #expect(error?.code == code)
    }
}
