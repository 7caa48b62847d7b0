import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushAPI
import PushCore
import PushJobs
import PushStore
import Testing

/// `/v1/apps/{app}/tokens/{kind}/…`: VoIP and push-to-start tokens bound, read, counted and
/// unbound in their own registries, with a device key as the app's SDK holds.
@Suite(.serialized) struct APITokenKindTests {
    static let app = EmbeddedStack.app

    @Test func tokensOfEachKindAreBoundApart() async throws {
        try await PipelineStack.with { stack in
            try await stack.withAPI { api, _ in
                let token = PipelineStack.token(7).hex
                let deviceKey = stack.stack.deviceAPIKey
                let voip = "/v1/apps/\(Self.app)/tokens/voip/\(token)"
                let bound = try await api.request(
                    "PUT", voip, json: ["environment": "sandbox", "openid": "user-7", "tags": ["fans"]], key: deviceKey)
                #expect(bound.status == 200, "\(String(decoding: bound.body, as: UTF8.self))")
                #expect(bound.json?.objectValue?["openid"] == "user-7")
                let start = "/v1/apps/\(Self.app)/tokens/push-to-start%3AMatchAttributes/\(token)"
                #expect(try await api.request("PUT", start, json: ["environment": "sandbox", "openid": "user-8"], key: deviceKey).status == 200)

                #expect(try await api.request("GET", voip, key: deviceKey).json?.objectValue?["environment"] == "sandbox")
                #expect(try await api.request("GET", start).json?.objectValue?["openid"] == "user-8")
                #expect(try await api.request("GET", "/v1/apps/\(Self.app)/devices/\(token)").status == 404, "not a device token")
                let counted = try await api.request("GET", "/v1/apps/\(Self.app)/tokens/voip")
                #expect(counted.json?.objectValue?["sandbox"]?.intValue == 1)
                #expect(try await stack.registry.device(app: TokenKind.voip.registry(of: Self.app), token: PipelineStack.token(7))?.tags == ["fans"])

                let badKind = try await api.request("PUT", "/v1/apps/\(Self.app)/tokens/fax/\(token)", json: ["environment": "sandbox"])
                #expect(badKind.status == 400 && badKind.errorField == "kind")
                let badType = try await api.request("GET", "/v1/apps/\(Self.app)/tokens/push-to-start%3A/\(token)")
                #expect(badType.status == 400 && badType.errorField == "kind")

                #expect(try await api.request("DELETE", voip, key: deviceKey).status == 200)
                #expect(try await api.request("DELETE", voip, key: deviceKey).status == 404)
                #expect(try await api.request("GET", start).status == 200, "the other kind keeps its token")
            }
        }
    }

    @Test func activityUpdateTokensAreKeptUntilTheyExpireAndReachedByActivityJobs() async throws {
        try await PipelineStack.with { stack in
            try await stack.withAPI { api, _ in
                let activity = "5C3F2E1A-8B7D-4F60-9A21-0D4E6B7C8F90"
                let base = "/v1/apps/\(Self.app)/activities/sandbox/\(activity)"
                let deviceKey = stack.stack.deviceAPIKey
                let live = (40..<43).map(PipelineStack.token)
                for token in live {
                    let kept = try await api.request("PUT", "\(base)/tokens/\(token.hex)", key: deviceKey)
                    #expect(kept.status == 200, "\(String(decoding: kept.body, as: UTF8.self))")
                    let expiresAt = kept.json?.objectValue?["expires-at"]?.intValue ?? 0
                    #expect(expiresAt > Int(Date().timeIntervalSince1970 * 1000) + 11 * 3_600_000, "kept 12 hours by default")
                }
                let short = try await api.request("PUT", "\(base)/tokens/\(PipelineStack.token(43).hex)", json: ["expires-in": 600], key: deviceKey)
                #expect(short.status == 200)
                let tooLong = try await api.request(
                    "PUT", "\(base)/tokens/\(PipelineStack.token(44).hex)", json: ["expires-in": 90_000], key: deviceKey)
                #expect(tooLong.status == 400 && tooLong.errorField == "expires-in")
                let badActivity = try await api.request(
                    "PUT", "/v1/apps/\(Self.app)/activities/sandbox/has%20space/tokens/\(live[0].hex)", key: deviceKey)
                #expect(badActivity.status == 400 && badActivity.errorField == "activity")
                // A token whose activity ended an hour ago: kept by an earlier clock, expired now.
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                #expect(
                    try await ActivityTokenStore(client: stack.redis).register(
                        app: Self.app, environment: .sandbox, activity: LiveActivityID(activity)!, token: PipelineStack.token(45),
                        expiresAt: now - 3_600_000, now: now - 7_200_000))
                #expect(try await api.request("DELETE", "\(base)/tokens/\(PipelineStack.token(43).hex)", key: deviceKey).status == 200)
                #expect(try await api.request("DELETE", "\(base)/tokens/\(PipelineStack.token(43).hex)", key: deviceKey).status == 404)
                #expect(try await api.request("GET", base).json?.objectValue?["tokens"]?.intValue == live.count)

                let update = PushJob(
                    id: "eta", app: Self.app, environment: .sandbox, audience: .activity(LiveActivityID(activity)!),
                    notification: APNsPayload(["aps": ["event": "update", "content-state": ["eta": 2], "timestamp": 1_700_000_000]]),
                    headers: PushHeaders(pushType: .liveactivity))
                try await stack.publish(update)
                let report = try await eventually("the activity job completes") {
                    try await stack.report("eta")
                } until: {
                    $0.isComplete
                }
                #expect(report.targeted == live.count && report.accepted == live.count, "\(report)")
                #expect(Set(try await stack.simulator.counters().acceptedPerToken.keys) == Set(live.map(\.hex)))
            }
        }
    }

    @Test func jobsAreListedNewestFirstAndAudiencesEstimated() async throws {
        try await PipelineStack.with { stack in
            try await stack.register((0..<30).map(PipelineStack.token), tags: ["sports"])
            try await stack.register((30..<40).map(PipelineStack.token), tags: ["news"])
            try await stack.withAPI { api, _ in
                for (id, audience) in [("first", ["broadcast": true]), ("second", ["tags": ["all": ["news"]]])] as [(String, JSONValue)] {
                    let pushed = try await api.request(
                        "POST", "/v1/apps/\(Self.app)/push",
                        json: [
                            "environment": "sandbox", "audience": audience, "headers": ["push-type": "alert"],
                            "notification": ["aps": ["alert": .string(id)]],
                        ])
                    #expect(pushed.status == 202, "\(String(decoding: pushed.body, as: UTF8.self))")
                    let jobID = try #require(pushed.json?.objectValue?["job"]?.stringValue)
                    _ = try await eventually("\(id) completes") {
                        try await stack.report(jobID)
                    } until: {
                        $0.isComplete
                    }
                }
                let listed = try await api.request("GET", "/v1/apps/\(Self.app)/jobs?limit=10")
                #expect(listed.status == 200, "\(String(decoding: listed.body, as: UTF8.self))")
                let jobs = listed.json?.objectValue?["jobs"]?.arrayValue ?? []
                #expect(jobs.count == 2)
                #expect(jobs.first?.objectValue?["status"]?.objectValue?["targeted"]?.intValue == 10, "newest first")
                #expect(jobs.last?.objectValue?["status"]?.objectValue?["accepted"]?.intValue == 40)
                let one = try await api.request("GET", "/v1/apps/\(Self.app)/jobs?limit=1&state=complete")
                #expect(one.json?.objectValue?["jobs"]?.arrayValue?.count == 1)
                #expect(
                    try await api.request("GET", "/v1/apps/\(Self.app)/jobs?state=paused").json?.objectValue?["jobs"]?.arrayValue?.isEmpty == true)
                let badLimit = try await api.request("GET", "/v1/apps/\(Self.app)/jobs?limit=0")
                #expect(badLimit.status == 400 && badLimit.errorField == "limit")
                let otherApp = try await api.request(
                    "GET", "/v1/apps/\(EmbeddedStack.otherApp)/jobs", key: stack.stack.apiKeys[EmbeddedStack.otherApp])
                #expect(otherApp.json?.objectValue?["jobs"]?.arrayValue?.isEmpty == true, "another app's jobs are not listed")

                let estimate = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/audience/estimate", json: ["environment": "sandbox", "audience": ["tags": ["all": ["sports"]]]])
                #expect(estimate.json?.objectValue?["devices"]?.intValue == 30 && estimate.json?.objectValue?["exact"] == false)
                let broadcast = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/audience/estimate", json: ["environment": "sandbox", "audience": ["broadcast": true]])
                #expect(broadcast.json?.objectValue?["devices"]?.intValue == 40 && broadcast.json?.objectValue?["exact"] == true)
                let invalid = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/audience/estimate", json: ["environment": "sandbox", "audience": ["tokens": []]])
                #expect(invalid.status == 400 && invalid.errorField == "audience.tokens")
            }
        }
    }

    @Test func aJobsProgressStreamsAsServerSentEventsUntilItEnds() async throws {
        try await PipelineStack.with { stack in
            try await stack.register((0..<60).map(PipelineStack.token))
            try await stack.withAPI { api, _ in
                // 20 notifications a second: the job is in progress for about three seconds.
                let pushed = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push",
                    json: [
                        "environment": "sandbox", "audience": ["broadcast": true], "headers": ["push-type": "alert"],
                        "notification": ["aps": ["alert": "hi"]], "throttle": ["rate-per-second": 20],
                    ])
                let jobID = try #require(pushed.json?.objectValue?["job"]?.stringValue)
                _ = try await eventually("the job is in progress") {
                    try await stack.report(jobID)
                } until: {
                    $0.state == .inProgress
                }
                let stream = try await api.request("GET", "/v1/apps/\(Self.app)/jobs/\(jobID)/events")
                #expect(stream.status == 200 && stream.header("Content-Type") == "text/event-stream")
                let text = String(decoding: stream.body, as: UTF8.self)
                #expect(text.hasPrefix("retry: 5000\n\n"))
                let events = text.components(separatedBy: "\n\n").filter { $0.hasPrefix("event: ") }
                let statuses = events.filter { $0.hasPrefix("event: status\n") }
                #expect(statuses.count >= 2, "progress was streamed: \(text)")
                let end = try #require(events.last)
                #expect(end.hasPrefix("event: end\ndata: "))
                let final = try JSONValue(parsing: Data(end.dropFirst("event: end\ndata: ".count).utf8))
                #expect(final.objectValue?["state"] == "complete" && final.objectValue?["accepted"]?.intValue == 60)
                #expect(try await api.request("GET", "/v1/apps/\(Self.app)/jobs/no-such-job/events").status == 404)
            }
        }
    }
}
