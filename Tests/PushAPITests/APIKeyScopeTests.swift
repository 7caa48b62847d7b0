import APNsCore
import Crypto
import EmbeddedStack
import Foundation
import HTTPTypes
import Logging
import PipelineTestSupport
import PushConfiguration
import PushCore
import Testing

@testable import PushAPI

/// Device keys (the ones an app ships) cannot publish or steer campaigns, and keys in an
/// `api-keys-file` are rotated without a restart.
@Suite struct APIKeyScopeTests {
    static let app = PipelineStack.app

    static func newKey() -> String {
        "pfk_" + (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    static func digest(_ key: String) -> String {
        "sha256:" + SHA256.hash(data: Array(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static func keysFile() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("api-keys")
    }

    @Test("a device key binds, tags and posts receipts; it cannot push, read jobs, count or restore")
    func deviceKeyScope() async throws {
        let file = try Self.keysFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let deviceKey = Self.newKey()
        try "\(Self.digest(deviceKey)) device\n".write(to: file, atomically: true, encoding: .utf8)
        var options = PipelineStack.Options()
        options.appSettings = ["api-keys-file: \(file.path)"]
        try await PipelineStack.with(options) { stack in
            try await stack.withAPI { api, _ in
                let token = PipelineStack.token(1).hex
                let devicePath = "/v1/apps/\(Self.app)/devices/\(token)"
                #expect(try await api.request("PUT", devicePath, json: ["environment": "sandbox"], key: deviceKey).status == 200)
                #expect(try await api.request("GET", devicePath, key: deviceKey).status == 200)
                #expect(try await api.request("POST", devicePath + "/tags", json: ["tags": ["sports"]], key: deviceKey).status == 200)
                #expect(try await api.request("GET", devicePath + "/tags", key: deviceKey).status == 200)
                #expect(try await api.request("DELETE", devicePath + "/tags/sports", key: deviceKey).status == 200)

                // The app's full key publishes; the device key may post the receipt of it.
                let push = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: Self.pushBody(token))
                let jobID = try #require(push.json?.objectValue?["job"]?.stringValue)
                let receipt = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/receipts", json: ["job": .string(jobID), "token": .string(token), "event": "delivered"],
                    key: deviceKey)
                #expect(receipt.status == 200)

                let refused: [(String, String, JSONValue?)] = [
                    ("POST", "/v1/apps/\(Self.app)/push", Self.pushBody(token)),
                    ("GET", "/v1/apps/\(Self.app)/jobs/\(jobID)", nil),
                    ("POST", "/v1/apps/\(Self.app)/jobs/\(jobID)/cancel", nil),
                    ("PUT", "/v1/apps/\(Self.app)/jobs/\(jobID)/rate", ["rate-per-second": 10]),
                    ("GET", "/v1/apps/\(Self.app)/devices", nil),
                    ("GET", "/v1/apps/\(Self.app)/tags", nil),
                    ("POST", devicePath + "/restore", nil),
                ]
                for (method, path, body) in refused {
                    let answer = try await api.request(method, path, json: body, key: deviceKey)
                    #expect(answer.status == 403, "\(method) \(path)")
                    let error = answer.json?.objectValue?["error"]?.objectValue
                    #expect(error?["field"]?.stringValue == "Authorization", "\(method) \(path)")
                    #expect(error?["message"]?.stringValue?.contains("device key") == true, "\(method) \(path)")
                }
                #expect(try await api.request("DELETE", devicePath, key: deviceKey).status == 200, "unbinding is the device's own")
            }
        }
    }

    /// `route`'s path with every parameter filled: `{app}` with `app`, a token with a valid one.
    static func path(of route: APIRoute, app: String) -> String {
        "/"
            + route.segments.map { segment in
                switch segment {
                case .literal(let literal): literal
                case .parameter("app"): app
                case .parameter("token"): PipelineStack.token(1).hex
                case .parameter("environment"): "sandbox"
                case .parameter(let name): "\(name)-1"
                }
            }.joined(separator: "/")
    }

    @Test("every route of an app, called without a key, with another app's key and with a device key: 401, 403, 403 but the device's")
    func everyRouteIsBehindTheKeyMiddleware() async throws {
        try await PipelineStack.with { stack in
            try await stack.withAPI { api, _ in
                let deviceKey = stack.stack.deviceAPIKey
                let otherKey = try #require(stack.stack.apiKeys[EmbeddedStack.otherApp])
                let routes = APIRoutes.all.filter(\.needsAPIKey)
                #expect(
                    Set(APIRoutes.all.filter { !$0.needsAPIKey }.map(\.path)) == ["/healthz", "/readyz", "/metrics"],
                    "every route but the probes and the scrape")
                #expect(routes.contains { $0.scope == .device } && routes.contains { $0.scope == .all })
                for route in routes {
                    let method = route.method.rawValue
                    let path = Self.path(of: route, app: Self.app)
                    let name = "\(method) \(route.path)"
                    let anonymous = try await api.request(method, path, key: .some(nil))
                    #expect(anonymous.status == 401 && anonymous.errorField == "Authorization", "\(name) without a key")
                    #expect(anonymous.header("WWW-Authenticate") == "Bearer", "\(name) without a key")
                    let other = try await api.request(method, path, key: otherKey)
                    #expect(other.status == 403 && other.errorField == "Authorization", "\(name) with another app's key")
                    let device = try await api.request(method, path, key: deviceKey)
                    if route.scope == .device {
                        #expect(![401, 403].contains(device.status) && device.status < 500, "\(name) with a device key: \(device.status)")
                    } else {
                        #expect(device.status == 403 && device.errorField == "Authorization", "\(name) with a device key")
                    }
                    let unknownApp = try await api.request(method, Self.path(of: route, app: "nope"))
                    #expect(unknownApp.status == 404 && unknownApp.errorField == "app", "\(name) of an app not configured")
                }
            }
        }
    }

    @Test("the key middleware's decision: unknown app 404, no or malformed Authorization 401, another key 403, a narrower scope 403")
    func keyDecision() throws {
        let (full, device) = (Self.newKey(), Self.newKey())
        let keyring = APIKeyring([
            "news": [
                APIKeyGrant(digest: try #require(APIKeyDigest(Self.digest(full))), scope: .all),
                APIKeyGrant(digest: try #require(APIKeyDigest(Self.digest(device))), scope: .device),
            ]
        ])
        let apps = [
            "news": AppSettings(
                id: "news", bundleID: "com.example.news", auth: .token(teamID: "TEAM123456", keyID: "KEY1234567", keyFile: "k.p8"))
        ]
        func status(_ app: String, _ authorization: String?, _ scope: APIKeyScope) -> (Int, String?) {
            do {
                let authorized = try APIKeyMiddleware.authorize(app: app, authorization: authorization, scope: scope, apps: apps, keyring: keyring)
                return (200, authorized.id)
            } catch {
                return (Int(error.status.code), error.field)
            }
        }
        #expect(status("news", "Bearer \(full)", .all) == (200, "news"))
        #expect(status("news", "bearer  \(full) ", .all) == (200, "news"), "the scheme is case-insensitive, the key trimmed")
        #expect(status("news", "Bearer \(device)", .device) == (200, "news"))
        #expect(status("news", "Bearer \(full)", .device) == (200, "news"), "a full key does what a device key does")
        #expect(status("news", "Bearer \(device)", .all) == (403, "Authorization"))
        #expect(status("news", "Bearer \(Self.newKey())", .device) == (403, "Authorization"))
        #expect(status("news", nil, .device) == (401, "Authorization"))
        #expect(status("news", "Basic \(full)", .all) == (401, "Authorization"))
        #expect(status("news", "Bearer ", .all) == (401, "Authorization"))
        #expect(status("sports", "Bearer \(full)", .all) == (404, "app"))
        #expect(status("ne%77s", "Bearer \(full)", .all) == (200, "news"), "{app} is percent-decoded")
        #expect(status("ne%ZZs", "Bearer \(full)", .all) == (400, "app"))
    }

    @Test("a rotated api-keys-file is picked up while the API runs: the new key works, the old one is refused")
    func rotationWithoutRestart() async throws {
        let file = try Self.keysFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let (old, new) = (Self.newKey(), Self.newKey())
        try "\(Self.digest(old))\n".write(to: file, atomically: true, encoding: .utf8)
        var options = PipelineStack.Options()
        options.appSettings = ["api-keys-file: \(file.path)"]
        try await PipelineStack.with(options) { stack in
            try await stack.withAPI { api, _ in
                let count = "/v1/apps/\(Self.app)/devices"
                #expect(try await api.request("GET", count, key: old).status == 200)
                #expect(try await api.request("GET", count, key: new).status == 403)
                try "# rotated\n\(Self.digest(new))\n".write(to: file, atomically: true, encoding: .utf8)
                _ = try await eventually("the new key is accepted") {
                    try await api.request("GET", count, key: new).status
                } until: {
                    $0 == 200
                }
                #expect(try await api.request("GET", count, key: old).status == 403)
                #expect(try await api.request("GET", count).status == 200, "keys in the configuration itself stay")
            }
        }
    }

    @Test("reloading: a changed file replaces the keys; a broken one keeps them and names the line, logged once per error")
    func reloadRule() throws {
        let file = try Self.keysFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let (first, second) = (Self.newKey(), Self.newKey())
        try "\(Self.digest(first)) device\n".write(to: file, atomically: true, encoding: .utf8)
        let app = AppSettings(
            id: "news", bundleID: "com.example.news", auth: .token(teamID: "TEAM123456", keyID: "KEY1234567", keyFile: "k.p8"),
            apiKeysFile: file.path)
        let capture = LogCapture()
        let logger = Logger(label: "keys") { CapturingLogHandler(label: $0, capture: capture) }
        let keys = try LiveAPIKeyring(apps: [app], logger: logger)
        func errorLines() -> [String] { capture.lines.filter { $0.contains(" error ") } }
        #expect(keys.keyring.scope(of: first, for: "news") == .device)
        #expect(keys.keyring.scope(of: first, for: "other") == nil)
        #expect(!keys.reload(), "an unchanged file changes nothing")

        try "\(Self.digest(first))\n\(Self.digest(second)) device\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(keys.reload())
        #expect(keys.keyring.scope(of: first, for: "news") == .all)
        #expect(keys.keyring.scope(of: second, for: "news") == .device)

        try "\(Self.digest(second))\n\(first)\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(!keys.reload(), "a line that is not a digest: the keys stay as they were")
        #expect(keys.keyring.scope(of: first, for: "news") == .all)
        #expect(keys.keyring.scope(of: second, for: "news") == .device)
        #expect(!keys.reload() && !keys.reload())
        #expect(errorLines().count == 1, "the same error is logged once, not at every reload: \(errorLines())")
        #expect(errorLines().first?.contains("line 2") == true && errorLines().first?.contains(first) == false, "\(errorLines())")
        try "\(first)\n\(Self.digest(second))\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(!keys.reload())
        #expect(errorLines().count == 2 && errorLines().last?.contains("line 1") == true, "another error is logged: \(errorLines())")
        try "\(Self.digest(first))\n\(Self.digest(second)) device\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(!keys.reload(), "the same keys as before the breakage")
        #expect(capture.lines.last?.contains("without errors") == true, "\(capture.lines)")
        try "\(second)\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(!keys.reload())
        #expect(errorLines().count == 3, "an error after a clean reload is logged again: \(errorLines())")

        try "\(Self.digest(first)) device\n\(Self.digest(first))\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(keys.reload())
        #expect(keys.keyring.scope(of: first, for: "news") == .all, "a digest listed twice grants the wider scope")
        #expect(keys.keyring.scope(of: second, for: "news") == nil)
    }

    static func pushBody(_ token: String) -> JSONValue {
        [
            "environment": "sandbox", "audience": ["tokens": [.string(token)]],
            "notification": ["aps": ["alert": "hello"]], "headers": ["push-type": "alert"],
        ]
    }
}
