import APNsCore
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushAPI
import PushConfiguration
import PushCore
import PushGateway
import PushStore
import Testing

/// The API's side of the online channel: connect tokens (issued to a device key, for registered
/// devices only, verified here with the stack's `gateway.secret-file`) and presence as the
/// gateways write it. The gateway itself is tested against real WebSocket clients in
/// Tests/online.
@Suite("Online channel through the API", .serialized)
struct APIOnlineTests {
    static let app = EmbeddedStack.app

    @Test("a connect token names its app, device and expiry; bad input and unknown devices are refused with the field")
    func connectTokens() async throws {
        let tokens = (0..<3).map(PipelineStack.token)
        try await PipelineStack.with { stack in
            try await stack.register([tokens[0]])
            let signer = ConnectToken(secret: try stack.configuration.gateway.resolvedSecret())
            try await stack.withAPI { api, _ in
                let key = stack.stack.deviceAPIKey
                let path = { (token: DeviceToken) in "/v1/apps/\(Self.app)/devices/\(token.hex)/connect-token" }
                let before = Int64(Date().timeIntervalSince1970)
                let issued = try await api.request("POST", path(tokens[0]), key: key)
                #expect(issued.status == 201)
                let text = try #require(issued.json?.objectValue?["connect-token"]?.stringValue)
                #expect(issued.json?.objectValue?["path"]?.stringValue == "/v1/apps/\(Self.app)/connect")
                let claims = try signer.verify(text, app: Self.app, now: before)
                #expect(claims.device == tokens[0])
                // gateway.token-ttl-seconds: 600 by default.
                #expect((before + 599...Int64(Date().timeIntervalSince1970) + 600).contains(claims.expiresAt))

                let short = try await api.request("POST", path(tokens[0]), json: ["ttl-seconds": 5], key: key)
                let shortClaims = try signer.verify(
                    try #require(short.json?.objectValue?["connect-token"]?.stringValue), app: Self.app, now: before)
                #expect(shortClaims.expiresAt <= Int64(Date().timeIntervalSince1970) + 5)

                for bad: JSONValue in [["ttl-seconds": 0], ["ttl-seconds": 601], ["ttl-seconds": "60"]] {
                    let refused = try await api.request("POST", path(tokens[0]), json: bad, key: key)
                    #expect(refused.status == 400)
                    #expect(refused.json?.objectValue?["error"]?.objectValue?["field"]?.stringValue == "ttl-seconds")
                }
                let unknown = try await api.request("POST", path(tokens[0]), json: ["ttl": 5], key: key)
                #expect(unknown.status == 400)
                let unregistered = try await api.request("POST", path(tokens[1]), key: key)
                #expect(unregistered.status == 404)
                #expect(unregistered.json?.objectValue?["error"]?.objectValue?["field"]?.stringValue == "token")
                let noKey = try await api.request("POST", path(tokens[0]), key: .some(nil))
                #expect(noKey.status == 401)
            }
        }
    }

    @Test("presence reads what the gateways wrote")
    func presence() async throws {
        let token = PipelineStack.token(7)
        try await PipelineStack.with { stack in
            try await stack.withAPI { api, _ in
                let path = "/v1/apps/\(Self.app)/devices/\(token.hex)/presence"
                let offline = try await api.request("GET", path, key: stack.stack.deviceAPIKey)
                #expect(offline.status == 200)
                #expect(offline.json == ["token": .string(token.hex), "online": false])
                try await PresenceStore(client: stack.redis).apply(
                    [PresenceChange(.claim, app: Self.app, token: token, record: PresenceRecord(gateway: "gw-9", connection: 3))],
                    lease: .seconds(30))
                let online = try await api.request("GET", path, key: stack.stack.deviceAPIKey)
                #expect(online.json == ["token": .string(token.hex), "online": true, "gateway": "gw-9"])
            }
        }
    }
}
