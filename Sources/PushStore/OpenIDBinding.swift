import APNsCore

/// What the shard step of a bind with an openid leaves for the openid steps: the token's new
/// binding generation and the user it belonged to before.
struct OpenIDBinding: Sendable, Hashable {
    var token: DeviceToken
    var openID: String
    /// The generation the shard step gave this binding (per-shard counter, never reused).
    var generation: Int64
    /// The device's openid before this bind, if any.
    var previousOpenID: String?
    /// The generation of the previous binding (0 if none).
    var previousGeneration: Int64
}
