import APNsCore
import Foundation
import Hummingbird
import PushConfiguration
import PushCore
import PushGateway
import PushStore

/// The online channel's side of the API: connect tokens for a registered device (what an app
/// asks for before it opens its connection to a gateway) and a device's presence.
enum OnlineRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.post, "/v1/apps/{app}/devices/{token}/connect-token", "issueConnectToken", scope: .device, connectToken),
        APIRoute(.get, "/v1/apps/{app}/devices/{token}/presence", "getDevicePresence", scope: .device, presence),
        APIRoute(.get, "/v1/apps/{app}/online", "getOnlineDevices", online),
    ]

    /// `GET …/online`: the app's devices connected to a gateway now, as the gateways count them
    /// (each writes its count every second; a count older than 5 s is not believed).
    static func online(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let count = try await call.api.presence.onlineCount(app: app.id, now: call.api.clock())
        return APIResponse.json(["devices": .number(JSONNumber(count.devices)), "gateways": .number(JSONNumber(count.gateways))])
    }

    /// `POST …/devices/{token}/connect-token`, optionally `{"ttl-seconds": N}` (1 up to
    /// `gateway.token-ttl-seconds`, the default): a token that opens one connection of this
    /// device to a gateway until it expires. 404 for a device not registered in the app; 503
    /// when `gateway.secret-file` is not configured.
    static func connectToken(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        let maxSeconds = Int(call.api.connectTokenTimeToLive.components.seconds)
        var seconds = maxSeconds
        if let body = try await call.optionalJSONObject() {
            try APIValidation.onlyKeys(body, ["ttl-seconds"])
            if let value = body["ttl-seconds"], value != .null {
                guard let requested = value.intValue, (1...maxSeconds).contains(requested) else {
                    throw APIError.invalid("ttl-seconds", "must be an integer from 1 to \(maxSeconds) (gateway.token-ttl-seconds)")
                }
                seconds = requested
            }
        }
        guard let signer = call.api.connectTokens else {
            throw APIError(
                .serviceUnavailable, "online-channel-not-configured",
                "the online channel is not configured: set gateway.secret-file for the API and the gateways", field: nil)
        }
        guard try await call.api.registry.device(app: app.id, token: token) != nil else {
            throw DeviceRoutes.notRegistered(token, app: app.id)
        }
        let expiresAt = call.api.clock() / 1000 + Int64(seconds)
        let text = signer.issue(ConnectToken.Claims(app: app.id, device: token, expiresAt: expiresAt))
        return APIResponse.json(
            [
                "token": .string(token.hex), "connect-token": .string(text),
                "expires-at": .string(RFC3339Timestamp.string(from: Date(timeIntervalSince1970: TimeInterval(expiresAt)))),
                "path": .string("/v1/apps/\(app.id)/connect"),
            ], status: .created)
    }

    /// `GET …/devices/{token}/presence`: whether the device holds a connection to a gateway
    /// now, and which.
    static func presence(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        let records = try await call.api.presence.lookup(app: app.id, tokens: [token])
        guard let record = records[token] else {
            return APIResponse.json(["token": .string(token.hex), "online": false])
        }
        return APIResponse.json(["token": .string(token.hex), "online": true, "gateway": .string(record.gateway)])
    }
}
