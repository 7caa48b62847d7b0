import APNsCore
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushAPI
import PushConfiguration
import PushCore
import PushPipeline
import PushStore
import Redis
import ServiceLifecycle
import Testing

/// The HTTP API against the real stack (embedded Kafka, redis-server, the simulator, a worker):
/// authentication and isolation between apps, the device routes, error bodies, health.
@Suite(.serialized) struct APIEndpointTests {
    static let app = EmbeddedStack.app
    static let other = EmbeddedStack.otherApp
    let token = PipelineStack.token(1).hex

    @Test func keysAreCheckedAndAppsIsolated() async throws {
        try await PipelineStack.with { stack in
            try await stack.withAPI { api, _ in
                let path = "/v1/apps/\(Self.app)/devices"
                let missing = try await api.request("GET", path, key: .some(nil))
                #expect(missing.status == 401)
                #expect(missing.errorCode == "unauthorized")
                #expect(missing.errorField == "Authorization")
                #expect(missing.header("WWW-Authenticate") == "Bearer")

                let malformed = try await api.request("GET", path, headers: ["Authorization": "Basic abc"], key: .some(nil))
                #expect(malformed.status == 401)

                let wrong = try await api.request("GET", path, key: "not-a-key")
                #expect(wrong.status == 403)
                #expect(wrong.errorCode == "forbidden")

                let otherKey = stack.stack.apiKeys[Self.other]
                let crossed = try await api.request("GET", path, key: otherKey)
                #expect(crossed.status == 403, "app \(Self.other)'s key must do nothing to app \(Self.app)")
                let crossedBind = try await api.request(
                    "PUT", "/v1/apps/\(Self.app)/devices/\(token)", json: ["environment": "sandbox"], key: otherKey)
                #expect(crossedBind.status == 403)
                #expect(try await stack.registry.device(app: Self.app, token: PipelineStack.token(1)) == nil)

                let own = try await api.request("GET", "/v1/apps/\(Self.other)/devices", key: otherKey)
                #expect(own.status == 200)

                let unknown = try await api.request("GET", "/v1/apps/no-such-app/devices")
                #expect(unknown.status == 404)
                #expect(unknown.errorField == "app")
            }
        }
    }

    @Test func devicesAreBoundTaggedCountedAndUnbound() async throws {
        try await PipelineStack.with { stack in
            try await stack.withAPI { api, _ in
                let base = "/v1/apps/\(Self.app)/devices/\(token)"
                let bound = try await api.request("PUT", base, json: ["environment": "sandbox", "openid": "user-1", "tags": ["sports", "news"]])
                #expect(bound.status == 200)
                let device = try #require(bound.json?.objectValue)
                #expect(device["token"]?.stringValue == token)
                #expect(device["openid"]?.stringValue == "user-1")
                #expect(device["tags"] == ["news", "sports"])
                #expect((device["registered-at"]?.intValue ?? 0) > 0)
                #expect(device["time-zone"] == .null)
                #expect(device["receipt-hours"] == ["utc": .array(Array(repeating: 0, count: 24)), "best-utc-hour": .null])

                // A time zone: refused unless the IANA database names it, kept by a bind that names none.
                for (zone, message) in [("GMT+5", "is not a time zone of the IANA database"), ("Mars/Olympus", "is not a time zone")] {
                    let refused = try await api.request("PUT", base, json: ["environment": "sandbox", "time-zone": .string(zone)])
                    let said = refused.json?.objectValue?["error"]?.objectValue?["message"]?.stringValue ?? ""
                    #expect(refused.status == 400 && refused.errorField == "time-zone" && said.contains(message), "\(said)")
                }
                let notText = try await api.request("PUT", base, json: ["environment": "sandbox", "time-zone": 9])
                #expect(notText.status == 400 && notText.errorField == "time-zone")
                let zoned = try await api.request("PUT", base, json: ["environment": "sandbox", "time-zone": "America/Sao_Paulo"])
                #expect(zoned.json?.objectValue?["time-zone"] == "America/Sao_Paulo")
                let rebound = try await api.request("PUT", base, json: ["environment": "sandbox"])
                #expect(rebound.json?.objectValue?["time-zone"] == "America/Sao_Paulo")
                #expect(try await api.request("GET", base).json?.objectValue?["time-zone"] == "America/Sao_Paulo")

                let record = try #require(try await stack.registry.device(app: Self.app, token: PipelineStack.token(1)))
                #expect(record.openID == "user-1")
                #expect(Set(record.tags) == ["sports", "news"])

                let added = try await api.request("POST", base + "/tags", json: ["tags": ["vip"]])
                #expect(added.status == 200)
                #expect(added.json?.objectValue?["tags"] == ["news", "sports", "vip"])
                let removed = try await api.request("DELETE", base + "/tags/sports")
                #expect(removed.json?.objectValue?["tags"] == ["news", "vip"])
                let listed = try await api.request("GET", base + "/tags")
                #expect(listed.json?.objectValue?["tags"] == ["news", "vip"])

                let appTags = try await api.request("GET", "/v1/apps/\(Self.app)/tags")
                #expect(appTags.json?.objectValue?["tags"]?.objectValue?["vip"]?.intValue == 1)
                let count = try await api.request("GET", "/v1/apps/\(Self.app)/devices")
                #expect(count.json == ["sandbox": 1, "production": 0, "suspect": ["sandbox": 0, "production": 0], "total": 1])

                let unbound = try await api.request("DELETE", base)
                #expect(unbound.status == 200)
                #expect(try await stack.registry.device(app: Self.app, token: PipelineStack.token(1)) == nil)
                #expect(try await stack.registry.deviceTime(app: Self.app, token: PipelineStack.token(1)).timeZone == nil)
                #expect(try await api.request("DELETE", base).status == 404)
                #expect(try await api.request("GET", base).status == 404)
                let tagsOfUnknown = try await api.request("POST", base + "/tags", json: ["tags": ["x"]])
                #expect(tagsOfUnknown.status == 404)
                #expect(tagsOfUnknown.errorField == "token")
            }
        }
    }

    @Test func usersLogOutTagsLeaveEveryDeviceAndDevicesExport() async throws {
        try await PipelineStack.with { stack in
            let tokens = (1...40).map(PipelineStack.token)
            for (index, device) in tokens.enumerated() {
                try await stack.registry.bind(
                    app: Self.app, token: device, environment: index < 20 ? .sandbox : .production,
                    openID: index == 3 ? "user-3" : nil, tags: index.isMultiple(of: 2) ? ["even", "all"] : ["all"])
            }
            try await stack.withAPI { api, _ in
                let users = "/v1/apps/\(Self.app)/users"
                let found = try await api.request("GET", "\(users)/user-3")
                #expect(found.status == 200)
                #expect(found.json?.objectValue?["token"]?.stringValue == tokens[3].hex)
                let loggedOut = try await api.request("DELETE", "\(users)/user-3")
                #expect(loggedOut.json == ["openid": "user-3", "token": .string(tokens[3].hex), "logged-out": true])
                #expect(try await stack.registry.device(app: Self.app, token: tokens[3])?.tags == ["all"], "the device stays")
                let gone = try await api.request("GET", "\(users)/user-3")
                #expect(gone.status == 404 && gone.errorField == "openid")
                #expect(try await api.request("DELETE", "\(users)/user-3").status == 404)
                #expect(try await api.request("GET", "\(users)/bad%07id").errorField == "openid")

                let removed = try await api.request("DELETE", "/v1/apps/\(Self.app)/tags/even")
                #expect(removed.json == ["tag": "even", "devices": 20])
                let tags = try await api.request("GET", "/v1/apps/\(Self.app)/tags")
                #expect(tags.json?.objectValue?["tags"] == ["all": 40])

                let export = try await api.request("GET", "/v1/apps/\(Self.app)/devices/export")
                #expect(export.status == 200)
                #expect(export.header("Content-Type") == "application/x-ndjson")
                let lines = String(decoding: export.body, as: UTF8.self).split(separator: "\n")
                let exported = try lines.map { try JSONValue(parsing: Data($0.utf8)) }
                #expect(Set(exported.compactMap { $0.objectValue?["token"]?.stringValue }) == Set(tokens.map(\.hex)))
                let record = try #require(try await stack.registry.device(app: Self.app, token: tokens[25]))
                #expect(exported.contains(record.jsonValue), "a line is the device as GET …/devices/{token} answers")

                let otherKey = stack.stack.apiKeys[Self.other]
                #expect(try await api.request("GET", "/v1/apps/\(Self.app)/devices/export", key: otherKey).status == 403)
                #expect(try await api.request("DELETE", "/v1/apps/\(Self.app)/tags/all", key: otherKey).status == 403)
            }
        }
    }

    @Test func badInputIsAnsweredWithTheFieldAtFault() async throws {
        try await PipelineStack.with { stack in
            try await stack.withAPI { api, _ in
                let base = "/v1/apps/\(Self.app)/devices"
                let cases: [(String, String, JSONValue?, Data?, Int, String?)] = [
                    ("PUT", "\(base)/xyz", ["environment": "sandbox"], nil, 400, "token"),
                    ("PUT", "\(base)/abcd", ["environment": "sandbox"], nil, 400, "token"),
                    ("PUT", "\(base)/\(token)", ["environment": "staging"], nil, 400, "environment"),
                    ("PUT", "\(base)/\(token)", ["environment": "sandbox", "colour": "red"], nil, 400, "colour"),
                    ("PUT", "\(base)/\(token)", ["environment": "sandbox", "tags": [1]], nil, 400, "tags[0]"),
                    ("PUT", "\(base)/\(token)", nil, Data("{\"environment\":".utf8), 400, "body"),
                    ("PUT", "\(base)/\(token)", nil, Data(), 400, "body"),
                    ("POST", "/v1/apps/\(Self.app)/push", ["environment": "sandbox"], nil, 400, "audience"),
                    ("POST", "/v1/apps/\(Self.app)/push", ["id": "mine"], nil, 400, "id"),
                    ("POST", "/v1/apps/\(Self.app)/push", ["app": .string(Self.other)], nil, 400, "app"),
                    ("GET", "/v1/apps/\(Self.app)/jobs/bad%20id", nil, nil, 400, "job"),
                    ("GET", "/v1/apps/\(Self.app)/jobs/unknown-job", nil, nil, 404, "job"),
                    ("POST", "/v1/apps/\(Self.app)/receipts", ["job": "j", "token": .string(token), "event": "read"], nil, 400, "event"),
                ]
                for (method, path, json, raw, status, field) in cases {
                    let answer = try await api.request(
                        method, path, json: json, rawBody: raw, headers: raw == nil ? [:] : ["Content-Type": "application/json"])
                    #expect(answer.status == status, "\(method) \(path): \(String(decoding: answer.body, as: UTF8.self))")
                    #expect(answer.errorField == field, "\(method) \(path)")
                    #expect(answer.errorCode != nil, "\(method) \(path) must carry {error: {code, message, field}}")
                }

                let unknownRoute = try await api.request("GET", "/v2/nothing")
                #expect(unknownRoute.status == 404)
                #expect(unknownRoute.errorCode == "not-found")
                let wrongMethod = try await api.request("PATCH", "\(base)/\(token)")
                #expect(wrongMethod.status == 405)
                #expect(wrongMethod.header("Allow")?.contains("PUT") == true)
                let text = try await api.request(
                    "PUT", "\(base)/\(token)", rawBody: Data("environment=sandbox".utf8), headers: ["Content-Type": "text/plain"])
                #expect(text.status == 415)
                let huge = Data(#"{"environment":"sandbox","openid":""#.utf8) + Data(repeating: UInt8(ascii: "a"), count: 3 << 20) + Data(#""}"#.utf8)
                let tooLarge = try await api.request("PUT", "\(base)/\(token)", rawBody: huge, headers: ["Content-Type": "application/json"])
                #expect(tooLarge.status == 413)
                #expect(tooLarge.errorCode == "payload-too-large")
                #expect(try await stack.registry.deviceCount(app: Self.app).sandbox == 0, "nothing refused may be written")
            }
        }
    }

    @Test func healthReadinessAndMetrics() async throws {
        try await PipelineStack.with { stack in
            try await stack.withAPI { api, _ in
                #expect(try await api.request("GET", "/healthz", key: .some(nil)).json == ["status": "ok"])
                let ready = try await api.request("GET", "/readyz", key: .some(nil))
                #expect(ready.status == 200)
                #expect(ready.json == ["status": "ready", "checks": ["kafka": "ok", "redis": "ok"]])
                _ = try await api.request("GET", "/v1/apps/\(Self.app)/devices")
                let metrics = try await api.request("GET", "/metrics", key: .some(nil))
                let text = String(decoding: metrics.body, as: UTF8.self)
                #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
                #expect(text.contains(#"pushfleet_api_requests_total{route="/v1/apps/{app}/devices",method="GET",status="200"} 1"#), "\(text)")
                #expect(!text.contains(stack.stack.apiKeys[Self.app] ?? "-"), "metrics must never carry a key")
                #expect(text.contains(#"pushfleet_dependency_up{dependency="kafka"} 1"#), "\(text)")
                #expect(text.contains(#"pushfleet_dependency_up{dependency="redis"} 1"#), "\(text)")

            }
            // An API whose Redis is not there: alive, not ready.
            var configuration = stack.configuration
            configuration.redis.port = 1
            let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
            let server = PushAPIServer(configuration: configuration, logger: stack.logger) { port in
                continuation.yield(port)
                continuation.finish()
            }
            let group = ServiceGroup(services: [server], logger: stack.logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next())
                let api = PushAPIClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, apiKey: nil)
                #expect(try await api.request("GET", "/healthz").status == 200)
                let unready = try await api.request("GET", "/readyz")
                #expect(unready.status == 503)
                #expect(unready.json?.objectValue?["status"]?.stringValue == "unavailable")
                #expect(unready.json?.objectValue?["checks"]?.objectValue?["redis"]?.stringValue?.hasPrefix("unavailable") == true)
                #expect(unready.json?.objectValue?["checks"]?.objectValue?["kafka"]?.stringValue == "ok")
                let metrics = String(decoding: try await api.request("GET", "/metrics").body, as: UTF8.self)
                #expect(metrics.contains(#"pushfleet_dependency_up{dependency="redis"} 0"#), "\(metrics)")
                #expect(metrics.contains(#"pushfleet_dependency_up{dependency="kafka"} 1"#), "\(metrics)")
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
        }
    }
}
