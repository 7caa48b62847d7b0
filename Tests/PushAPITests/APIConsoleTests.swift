import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushAPI
import PushCore
import Testing

/// What the console stands on: its files served under /console with their headers, and the two
/// routes only it needed (`…/push/check`, `…/push/test`), on the real stack with the simulator.
@Suite(.serialized) struct APIConsoleTests {
    static let app = EmbeddedStack.app

    static func job(_ audience: JSONValue, headers: JSONValue = ["push-type": "alert"], name: String? = nil) -> JSONValue {
        var job: JSONObject = [
            "environment": "sandbox", "audience": audience, "notification": ["aps": ["alert": "hello"], "article": 42], "headers": headers,
        ]
        job["name"] = name.map(JSONValue.string)
        return .object(job)
    }

    @Test func theConsoleIsServedWithItsHeadersAndNothingElseUnderItsPath() async throws {
        try await PipelineStack.with { stack in
            try await stack.withAPI { api, _ in
                // `/console` answers 308 to `/console/` (the browser tests follow it).
                let bare = try await api.request("GET", "/console", key: .some(nil))
                #expect(bare.status == 308)
                #expect(bare.header("Location") == "/console/")
                let page = try await api.request("GET", "/console/", key: .some(nil))
                #expect(page.status == 200, "the page needs no key: it asks for one")
                #expect(page.header("Content-Type") == "text/html; charset=utf-8")
                let html = String(decoding: page.body, as: UTF8.self)
                #expect(html.contains(#"<script src="console.js" defer></script>"#))
                let policy = try #require(page.header("Content-Security-Policy"))
                #expect(policy.contains("script-src 'self'") && policy.contains("connect-src 'self'") && policy.contains("frame-ancestors 'none'"))
                #expect(page.header("X-Content-Type-Options") == "nosniff")

                let script = try await api.request("GET", "/console/console.js", key: .some(nil))
                #expect(script.status == 200)
                #expect(script.header("Content-Type") == "text/javascript; charset=utf-8")
                #expect(String(decoding: script.body, as: UTF8.self).contains("sessionStorage"))
                let etag = try #require(script.header("ETag"))
                let again = try await api.request("GET", "/console/console.js", headers: ["If-None-Match": etag], key: .some(nil))
                #expect(again.status == 304)
                #expect(again.body.isEmpty)

                let style = try await api.request("GET", "/console/console.css", key: .some(nil))
                #expect(style.header("Content-Type") == "text/css; charset=utf-8")

                let missing = try await api.request("GET", "/console/../schemas/openapi.yaml", key: .some(nil))
                #expect(missing.status == 404)
                let unknown = try await api.request("GET", "/console/secrets.json", key: .some(nil))
                #expect(unknown.status == 404)
                #expect(unknown.errorCode == "not-found")
                let post = try await api.request("POST", "/console/", key: .some(nil))
                #expect(post.status == 405)
                #expect(post.header("Allow") == "GET, HEAD")
            }
        }
    }

    @Test func checkValidatesLikePushAndMeasuresThePayloadWithoutPublishing() async throws {
        try await PipelineStack.with { stack in
            try await stack.withAPI { api, _ in
                let check = "/v1/apps/\(Self.app)/push/check"
                let valid = try await api.request("POST", check, json: Self.job(["broadcast": true]))
                #expect(valid.status == 200)
                let answer = try #require(valid.json?.objectValue)
                let payload = try #require(answer["payload"]?.objectValue)
                #expect(payload["article"] == 42)
                #expect(payload["pushfleet"]?.objectValue?["job"]?.stringValue != nil, "the receipt key the server adds is counted")
                // Compact JSON has the same length in any key order.
                #expect(answer["payload-bytes"]?.intValue == JSONValue.object(payload).compactData().count)
                #expect(answer["payload-limit"] == 4096)
                let voip = try await api.request("POST", check, json: Self.job(["broadcast": true], headers: ["push-type": "voip"]))
                #expect(voip.json?.objectValue?["payload-limit"] == 5120)

                let long = try await api.request(
                    "POST", check,
                    json: Self.job(["broadcast": true], headers: ["push-type": "alert", "collapse-id": .string(String(repeating: "x", count: 65))]))
                let published = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push",
                    json: Self.job(["broadcast": true], headers: ["push-type": "alert", "collapse-id": .string(String(repeating: "x", count: 65))]))
                #expect(long.status == 400)
                #expect(long.errorField == "headers.collapse-id")
                #expect(long.body == published.body, "the same error as POST …/push")

                let jobs = try await api.request("GET", "/v1/apps/\(Self.app)/jobs")
                #expect(jobs.json?.objectValue?["jobs"]?.arrayValue?.isEmpty == true, "checking publishes nothing")
            }
        }
    }

    @Test func aTestSendAnswersWhatAPNsSaidForEachDeviceAndRecordsNothing() async throws {
        let device = PipelineStack.token(1)
        let gone = PipelineStack.token(2)
        let unknown = PipelineStack.token(3)
        try await PipelineStack.with(simulator: { $0.devices.unregistered = [gone.hex: 5_000] }) { stack in
            try await stack.withAPI { api, _ in
                for (token, openID) in [(device, "alice"), (gone, "bob")] {
                    let bound = try await api.request(
                        "PUT", "/v1/apps/\(Self.app)/devices/\(token.hex)", json: ["environment": "sandbox", "openid": .string(openID)])
                    #expect(bound.status == 200)
                }
                let test = "/v1/apps/\(Self.app)/push/test"
                let byOpenID = try await api.request("POST", test, json: Self.job(["openids": ["alice", "bob"]]))
                #expect(byOpenID.status == 200)
                let answered = try #require(byOpenID.json?.objectValue?["results"]?.arrayValue)
                let results = answered.compactMap { $0.objectValue }
                try #require(results.count == 2)
                #expect(results.map { $0["token"]?.stringValue } == [device.hex, gone.hex])
                #expect(results[0]["accepted"] == true && results[0]["status"] == 200 && results[0]["apns-id"]?.stringValue != nil)
                #expect(results[1]["accepted"] == false && results[1]["status"] == 410 && results[1]["reason"] == "Unregistered")

                let byToken = try await api.request("POST", test, json: Self.job(["tokens": [.string(unknown.hex)]]))
                #expect(byToken.json?.objectValue?["results"]?.arrayValue?.first?.objectValue?["accepted"] == true)
                let counters = try await stack.simulator.counters()
                #expect(counters.accepted == 2)

                // Nothing recorded: no job listed, and the unregistered device is still bound.
                let jobs = try await api.request("GET", "/v1/apps/\(Self.app)/jobs")
                #expect(jobs.json?.objectValue?["jobs"]?.arrayValue?.isEmpty == true)
                #expect(try await api.request("GET", "/v1/apps/\(Self.app)/devices/\(gone.hex)").status == 200)

                let nobody = try await api.request("POST", test, json: Self.job(["openids": ["nobody"]]))
                #expect(nobody.status == 404)
                #expect(nobody.errorField == "audience.openids")
                let broadcast = try await api.request("POST", test, json: Self.job(["broadcast": true]))
                #expect(broadcast.status == 400)
                #expect(broadcast.errorField == "audience")
                let eleven = (10..<21).map { JSONValue.string(PipelineStack.token($0).hex) }
                let tooMany = try await api.request("POST", test, json: Self.job(["tokens": .array(eleven)]))
                #expect(tooMany.status == 400)
                #expect(tooMany.errorField == "audience")
                let elevenUsers = (0..<11).map { JSONValue.string("nobody-\($0)") }
                let tooManyUsers = try await api.request("POST", test, json: Self.job(["openids": .array(elevenUsers)]))
                #expect(tooManyUsers.status == 400, "counted before any openid is looked up")
                #expect(tooManyUsers.errorField == "audience")
                #expect(try await stack.simulator.counters().accepted == 2, "refused test sends reach no device")
            }
        }
    }

    @Test func aDeviceListsTheCampaignsItConfirmedWithReceipts() async throws {
        let first = PipelineStack.token(1)
        let second = PipelineStack.token(2)
        try await PipelineStack.with { stack in
            try await stack.register([first, second])
            try await stack.withAPI { api, _ in
                var jobs: [String] = []
                for index in 0..<3 {
                    let job = Self.job(["tokens": [.string(first.hex), .string(second.hex)]], name: index == 2 ? "Spring sale" : nil)
                    let published = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: job)
                    jobs.append(try #require(published.json?.objectValue?["job"]?.stringValue))
                }
                for (job, event) in [(jobs[0], "delivered"), (jobs[2], "delivered"), (jobs[2], "opened")] {
                    let posted = try await api.request(
                        "POST", "/v1/apps/\(Self.app)/receipts", json: ["job": .string(job), "token": .string(first.hex), "event": .string(event)],
                        key: stack.stack.deviceAPIKey)
                    #expect(posted.status == 200)
                }
                let answer = try await api.request("GET", "/v1/apps/\(Self.app)/devices/\(first.hex)/campaigns")
                #expect(answer.status == 200)
                let campaigns = try #require(answer.json?.objectValue?["campaigns"]?.arrayValue).compactMap { $0.objectValue }
                #expect(campaigns.map { $0["job"]?.stringValue } == [jobs[2], jobs[0]], "newest first, only the confirmed ones")
                #expect(campaigns.map { $0["name"] } == ["Spring sale", .null], "each with its name, null without one")
                #expect(campaigns.first?["events"] == ["delivered", "opened"])
                #expect(campaigns.last?["events"] == ["delivered"])

                let none = try await api.request("GET", "/v1/apps/\(Self.app)/devices/\(second.hex)/campaigns")
                #expect(none.json?.objectValue?["campaigns"] == [])
                let newestOnly = try await api.request("GET", "/v1/apps/\(Self.app)/devices/\(first.hex)/campaigns?limit=1")
                #expect(newestOnly.json?.objectValue?["campaigns"]?.arrayValue?.count == 1)
                let bad = try await api.request("GET", "/v1/apps/\(Self.app)/devices/\(first.hex)/campaigns?limit=0")
                #expect(bad.status == 400)
                #expect(bad.errorField == "limit")
                let deviceKey = try await api.request(
                    "GET", "/v1/apps/\(Self.app)/devices/\(first.hex)/campaigns", key: stack.stack.deviceAPIKey)
                #expect(deviceKey.status == 403, "a device key reads no campaigns")
            }
        }
    }
}
