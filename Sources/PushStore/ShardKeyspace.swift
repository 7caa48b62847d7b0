import APNsCore

/// The Redis keys of one shard of one app (see `schemas/redis.md`).
///
/// Every key starts with `pf:{<app>:<shard>}:`, so all of them hash to the shard's slot and a
/// script may touch any of them atomically in a Redis Cluster.
struct ShardKeyspace: Sendable {
    /// `pf:{<app>:<shard>}:`
    let base: String

    init(app: String, shard: Int) {
        base = "pf:{\(app):\(shard)}:"
    }

    /// HASH `env`, `at`, while a user is logged in `openid`, `gen`, and while the token is
    /// suspect `suspect` (the reason) and `suspect-at`.
    func device(_ token: DeviceToken) -> String { base + "device:" + token.hex }
    /// SET of the device's tag names.
    func deviceTags(_ token: DeviceToken) -> String { base + "device:" + token.hex + ":tags" }
    /// SET of the shard's tokens registered in `environment`.
    func tokens(_ environment: APNsEnvironment) -> String { base + "tokens:" + environment.rawValue }
    /// SET of the shard's tokens of `environment` kept aside as suspect: out of ``tokens(_:)``,
    /// so no audience reaches them, until they bind again or an operator restores them.
    func suspects(_ environment: APNsEnvironment) -> String { base + "suspect:" + environment.rawValue }
    /// SET of the shard's tokens carrying `tag` (both environments).
    func tag(_ tag: String) -> String { tagPrefix + tag }
    /// What ``tag(_:)`` prepends to a tag name; the unbind script builds tag keys from it.
    var tagPrefix: String { base + "tag:" }
    /// HASH tag name → number of the shard's devices carrying it.
    var tagCounts: String { base + "tags" }
    /// STRING counter handing out binding generations for openid bindings.
    var sequence: String { base + "seq" }
    /// SET, temporary: a materialised tag audience.
    func audience(_ id: String) -> String { base + "audience:" + id }
    /// SET, temporary, lives only inside the audience script: the union of the `any` tags.
    func audienceScratch(_ id: String) -> String { base + "audience:" + id + ":any" }
}

/// The key of an openid's mapping: `pf:{<app>:openid:<openid>}`, its own hash slot.
func openIDKey(app: String, openID: String) -> String {
    "pf:{\(app):openid:\(openID)}"
}
