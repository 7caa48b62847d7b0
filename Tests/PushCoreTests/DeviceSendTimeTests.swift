import APNsCore
import Foundation
import Testing

@testable import PushCore

@Suite("send-at per device: JSON and validation")
struct DeviceSendTimeTests {
    func job(_ sendAt: JSONValue, audience: JSONValue = ["broadcast": true], pushType: String = "alert") -> JSONValue {
        [
            "app": "news", "environment": "sandbox", "audience": audience, "notification": ["aps": ["alert": "hi"]],
            "headers": ["push-type": .string(pushType)], "send-at": sendAt,
        ]
    }

    @Test func localTimeAndBestHourReadAndWriteBack() throws {
        let local = try PushJob(json: job(["local-time": "09:05"]))
        #expect(local.sendAtDevice == .localTime(hour: 9, minute: 5) && local.sendAt == nil)
        #expect(local.jsonValue.objectValue?["send-at"] == ["local-time": "09:05"])
        let best = try PushJob(json: job(["best-hour": ["within": "36h"]]))
        #expect(best.sendAtDevice == .bestHour(withinHours: 36))
        #expect(try PushJob(json: best.jsonValue) == best)
        // A date-time is as it was.
        let dated = try PushJob(json: job("2030-01-01T09:00:00Z"))
        #expect(dated.sendAt != nil && dated.sendAtDevice == nil)
    }

    static let badSendAts: [(JSONValue, String)] = [
        (["local-time": "24:00"], "send-at.local-time"), (["local-time": "9:00"], "send-at.local-time"),
        (["local-time": "09:60"], "send-at.local-time"), (["local-time": 900], "send-at.local-time"),
        (["best-hour": ["within": "0h"]], "send-at.best-hour.within"), (["best-hour": ["within": "169h"]], "send-at.best-hour.within"),
        (["best-hour": ["within": "24"]], "send-at.best-hour.within"), (["best-hour": ["within": "+2h"]], "send-at.best-hour.within"),
        (["best-hour": [:]], "send-at.best-hour.within"), (["best-hour": ["within": "24h", "x": 1]], "send-at.best-hour.x"),
        ([:], "send-at"), (["local-time": "09:00", "best-hour": ["within": "24h"]], "send-at"), (["at": "09:00"], "send-at.at"),
    ]

    @Test(arguments: badSendAts)
    func badSendAtIsNamed(_ value: JSONValue, _ field: String) {
        do {
            let decoded = try PushJob(json: job(value))
            try decoded.validate()
            Issue.record("\(value) was accepted")
        } catch let error as MessageValidationError {
            #expect(error.field == field, "\(value): \(error)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func aChannelOrActivityAudienceTakesNoDeviceTime() throws {
        let channel = try PushJob(json: job(["local-time": "09:00"], audience: ["channel": "dGVzdA=="], pushType: "liveactivity"))
        #expect(throws: MessageValidationError.self) { try channel.validate() }
        let tokens = try PushJob(json: job(["local-time": "09:00"], audience: ["tokens": [.string(String(repeating: "ab", count: 32))]]))
        try tokens.validate()
    }
}
