import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import Kafka
import PipelineTestSupport
import PushAPI
import PushCore
import PushJobs
import PushStore
import Redis
import Testing

/// Live Activity broadcast channels end to end: created, listed and deleted through the API
/// (which goes to the simulator's channel management API), and jobs broadcast on them by the
/// worker (`/4/broadcasts`), against the real stack.
@Suite(.serialized) struct APIChannelTests {
    static let app = EmbeddedStack.app

    /// A Live Activity update on a channel; its expiration is ignored on a channel that stores nothing.
    static func job(id: String, channel: String, expiration: Int? = nil) throws -> PushJob {
        var headers: JSONObject = ["push-type": "liveactivity"]
        if let expiration { headers["expiration"] = .number(JSONNumber(expiration)) }
        let json: JSONValue = [
            "id": .string(id), "app": .string(app), "environment": "sandbox", "audience": ["channel": .string(channel)],
            "headers": .object(headers),
            "notification": ["aps": ["timestamp": 1_700_000_000, "event": "update", "content-state": ["score": "2-1"]]],
        ]
        return try PushJob.decodeAndValidate(from: json.compactData())
    }

    /// A channel id in a path: base64's `/` as `%2F`.
    static func path(_ id: String) -> String {
        "/v1/apps/\(app)/channels/sandbox/" + id.replacingOccurrences(of: "/", with: "%2F").replacingOccurrences(of: "+", with: "%2B")
    }

    @Test func channelsAreCreatedBroadcastOnAndDeleted() async throws {
        try await PipelineStack.with(simulator: { $0.maxChannelsPerApp = 3 }) { stack in
            try await stack.withAPI { api, _ in
                let base = "/v1/apps/\(Self.app)/channels/sandbox"
                let created = try await api.request("POST", base, json: ["message-storage-policy": "none"])
                #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
                let id = try #require(created.json?.objectValue?["channel"]?.stringValue)
                #expect(created.json?.objectValue?["message-storage-policy"] == "none")
                let stored = try await api.request("POST", base, json: ["message-storage-policy": "most-recent"])
                let storedID = try #require(stored.json?.objectValue?["channel"]?.stringValue)

                let badPolicy = try await api.request("POST", base, json: ["message-storage-policy": "all"])
                #expect(badPolicy.status == 400 && badPolicy.errorField == "message-storage-policy")
                let badEnvironment = try await api.request("GET", "/v1/apps/\(Self.app)/channels/staging")
                #expect(badEnvironment.status == 400 && badEnvironment.errorField == "environment")

                let listed = try await api.request("GET", base)
                let ids = listed.json?.objectValue?["channels"]?.arrayValue?.compactMap { $0.objectValue?["channel"]?.stringValue }
                #expect(Set(ids ?? []) == [id, storedID])
                let one = try await api.request("GET", Self.path(storedID))
                #expect(one.status == 200 && one.json?.objectValue?["message-storage-policy"] == "most-recent")

                // A broadcast on each channel; the first stores nothing, so its expiration is sent as 0.
                let later = Int(Date().timeIntervalSince1970) + 3_600
                try await stack.publish(try Self.job(id: "on-none", channel: id, expiration: later))
                try await stack.publish(try Self.job(id: "on-stored", channel: storedID, expiration: later))
                for job in ["on-none", "on-stored"] {
                    let report = try await eventually("\(job) completes") {
                        try await stack.report(job)
                    } until: {
                        $0.isComplete
                    }
                    #expect(report.accepted == 1 && report.sent == 1 && report.targeted == 1, "\(job): \(report)")
                }
                #expect(try await stack.simulator.counters().broadcasts == [id: 1, storedID: 1])

                // A channel kept here that APNs no longer has: the job completes, failed with APNs's reason.
                let forgotten = try #require(APNsChannelID("Zm9yZ290dGVu"))
                #expect(
                    try await ChannelStore(client: stack.redis).add(
                        app: Self.app, environment: .sandbox, ChannelRecord(id: forgotten, messageStoragePolicy: .noMessageStored, createdAt: 1)))
                try await stack.publish(try Self.job(id: "on-forgotten", channel: forgotten.rawValue))
                let failed = try await eventually("on-forgotten completes") {
                    try await stack.report("on-forgotten")
                } until: {
                    $0.isComplete
                }
                #expect(failed.failedByReason == ["ChannelNotRegistered": 1] && failed.accepted == 0, "\(failed)")
                #expect(try await ChannelStore(client: stack.redis).remove(app: Self.app, environment: .sandbox, id: forgotten))

                // A job naming a channel PushFleet does not know is dead-lettered, naming the field.
                try await stack.publish(try Self.job(id: "on-unknown", channel: "bm90LWEtY2hhbm5lbA=="))
                let letters = try await stack.readTopic(PushTopic.deadLetters, count: 1).map { try DeadLetter.decode(from: Data($0.value)) }
                #expect(letters.first?.reason == "unknown-channel" && letters.first?.field == "audience.channel", "\(letters)")

                // Apple's own limit (3 here) answers 409, as does PushFleet's 10,000 before Apple is asked.
                #expect(try await api.request("POST", base, json: ["message-storage-policy": "none"]).status == 201)
                let refused = try await api.request("POST", base, json: ["message-storage-policy": "none"])
                #expect(refused.status == 409 && refused.errorCode == "channel-limit", "\(String(decoding: refused.body, as: UTF8.self))")

                let deleted = try await api.request("DELETE", Self.path(id))
                #expect(deleted.status == 200, "\(String(decoding: deleted.body, as: UTF8.self))")
                #expect(try await api.request("GET", Self.path(id)).status == 404)
                let again = try await api.request("DELETE", Self.path(id))
                #expect(again.status == 404 && again.errorField == "channel")
                #expect(try await stack.simulator.counters().channels == 2)

                var fill: [RedisArgument] = ["HSET", "pf:{\(Self.app)}:channels:sandbox"]
                for n in 0..<APNsChannel.maxPerApp {
                    fill += [.string("ZmlsbC\(n)"), "0:1"]
                }
                _ = try await stack.redis.send(fill)
                let full = try await api.request("POST", base, json: ["message-storage-policy": "none"])
                #expect(full.status == 409 && full.errorCode == "channel-limit")
                #expect(try await stack.simulator.counters().channels == 2, "APNs was not asked")
            }
        }
    }
}
