/// Why the gateway ends a connection: a WebSocket close code and a reason the client can show
/// or log. The 4xxx codes are PushFleet's (RFC 6455 §7.4.2 leaves 4000–4999 to applications);
/// a client reconnects after all but the refusals of its credentials (4001–4003), which need a
/// new connect token first.
public struct GatewayClose: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: UInt16
    public var reason: String
    /// The metric label (`pushfleet_gateway_closes_total{reason}`): one per kind of close, a
    /// bounded set.
    public var label: String

    /// A close with its code and reason, labelled for the metrics by its code: `normal` for
    /// 1000, `other` for the rest (a client's own codes).
    public init(code: UInt16, reason: String) {
        self.init(code: code, reason: reason, label: code == 1000 ? "normal" : "other")
    }

    init(code: UInt16, reason: String, label: String) {
        self.code = code
        self.reason = reason
        self.label = label
    }

    /// 1001: the gateway is stopping (a deploy, a scale-in); reconnect, another gateway takes it.
    public static let goingAway = GatewayClose(code: 1001, reason: "gateway stopping: reconnect", label: "going-away")
    /// 1003: a binary frame; the protocol is JSON text.
    public static let binaryFrame = GatewayClose(code: 1003, reason: "binary frames are not accepted: send JSON text", label: "binary-frame")
    /// 1007: a text frame that is not a JSON object with a string `type`.
    public static func badMessage(_ problem: String) -> GatewayClose {
        GatewayClose(code: 1007, reason: "not a PushFleet message: \(problem)", label: "bad-message")
    }
    /// 1009: a frame past `gateway.max-frame-bytes`.
    public static func frameTooLarge(limit: Int) -> GatewayClose {
        GatewayClose(code: 1009, reason: "frame larger than \(limit) bytes", label: "frame-too-large")
    }
    /// 1003: a fragmented message; each message is one frame.
    public static let fragmented = GatewayClose(
        code: 1003, reason: "fragmented messages are not accepted: send each message in one frame", label: "fragmented")
    /// 1002: a frame that breaks RFC 6455 (unmasked, reserved bits, bad control frame).
    public static let protocolError = GatewayClose(code: 1002, reason: "WebSocket protocol error", label: "protocol-error")
    /// 1006, never sent: the connection ended without a close frame (the metric's `dropped`).
    public static let dropped = GatewayClose(code: 1006, reason: "connection lost", label: "dropped")
    /// 4001: no connect token, or not one of this fleet's.
    public static let unauthorized = GatewayClose(code: 4001, reason: "a valid connect token is required", label: "unauthorized")
    /// 4002: the connect token has expired; ask the API for a new one.
    public static let tokenExpired = GatewayClose(code: 4002, reason: "connect token expired", label: "token-expired")
    /// 4003: the token was issued for another app than the path names.
    public static let otherApp = GatewayClose(code: 4003, reason: "connect token issued for another app", label: "other-app")
    /// 4004: the path's app is not configured.
    public static let unknownApp = GatewayClose(code: 4004, reason: "unknown app", label: "unknown-app")
    /// 4008: nothing came from the client within `gateway.idle-timeout-seconds`.
    public static let idle = GatewayClose(code: 4008, reason: "idle timeout: no frame or pong received", label: "idle")
    /// 4009: the device connected again elsewhere; this older connection is closed.
    public static let replaced = GatewayClose(code: 4009, reason: "replaced by a newer connection of this device", label: "replaced")
    /// 4029: more frames than `gateway.messages-per-second` allows.
    public static let rateLimited = GatewayClose(code: 4029, reason: "too many frames: slow down", label: "rate-limited")

    /// The close code for a refused connect token.
    public static func refusal(_ refusal: ConnectToken.Refusal) -> GatewayClose {
        switch refusal {
        case .malformed, .forged: .unauthorized
        case .expired: .tokenExpired
        case .otherApp: .otherApp
        }
    }

    public var description: String { "\(code) \(reason)" }
}
