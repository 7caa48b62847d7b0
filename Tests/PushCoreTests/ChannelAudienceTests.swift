import APNsCore
import Foundation
import PushCore
import Testing

@Suite("Channel audience")
struct ChannelAudienceTests {
    static func job(headers: JSONValue) -> JSONValue {
        [
            "app": "news", "environment": "sandbox", "audience": ["channel": "dHN0LXNyY2gtY2hubA=="], "headers": headers,
            "notification": ["aps": ["timestamp": 1_700_000_000, "event": "update", "content-state": ["score": "1-0"]]],
        ]
    }

    @Test("a Live Activity job on a channel decodes and encodes back")
    func roundTrip() throws {
        let job = try PushJob.decodeAndValidate(from: Self.job(headers: ["push-type": "liveactivity"]).compactData())
        #expect(job.audience == .channel(APNsChannelID("dHN0LXNyY2gtY2hubA==")!))
        #expect(job.audience.kind == "channel")
        let again = try PushJob.decodeAndValidate(from: job.jsonData())
        #expect(again.audience == job.audience)
        #expect(PushJobSummary(job).listedRecipients == nil)
    }

    @Test("a broadcast takes no topic and no collapse id")
    func headersABroadcastCannotCarry() {
        for (key, value) in [("topic", JSONValue.string("com.example.news.push-type.liveactivity")), ("collapse-id", "score")] {
            let json = Self.job(headers: ["push-type": "liveactivity", .init(key): value])
            do {
                _ = try PushJob.decodeAndValidate(from: json.compactData())
                Issue.record("\(key) accepted on a channel job")
            } catch {
                #expect(error.field == "headers.\(key)")
            }
        }
    }
}
