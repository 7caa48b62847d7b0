import Redis

/// A fleet-wide token bucket per app, optionally per scope within the app (a job, a topic):
/// workers take permits in blocks before sending to APNs.
///
/// The bucket lives in Redis (`pf:{<app>:rate}:<scope>`) and is refilled by a script on the
/// Redis server's clock (`TIME`), so every worker of the fleet draws from the same bucket on the
/// same clock; worker clocks do not matter. A bucket nobody used for long enough to refill
/// expires; an absent bucket is a full one.
package final class RateLimiter: Sendable {
    let client: any RedisCommands

    /// Creates a limiter over `client`.
    package init(client: any RedisCommands) {
        self.client = client
    }

    /// Takes up to `requested` permits from the bucket (`app`, `scope`) refilling at
    /// `ratePerSecond` up to `burst`. Grants what is available (partial grants allowed), never
    /// more. A new bucket starts full. Fractional accrual is kept between calls.
    ///
    /// A bucket's rate and burst are those of the call: callers sharing a bucket should pass the
    /// same. Ask for at most `burst` permits; more are never available at once.
    ///
    /// - Parameters:
    ///   - scope: the bucket within the app (1–128 bytes of UTF-8, no control characters);
    ///     `nil` is the app's own bucket, `"app"`.
    ///   - ratePerSecond: permits added per second (finite, > 0).
    ///   - burst: the most permits the bucket holds (≥ 1).
    ///   - requested: permits wanted (≥ 1).
    /// - Returns: the permits granted and, when fewer than requested, the time until the
    ///   missing ones accrue.
    /// - Throws: ``StoreError`` naming `app`, `scope`, `ratePerSecond`, `burst` or
    ///   `requested`; `RedisClientError`.
    package func acquire(
        app: String,
        scope: String? = nil,
        ratePerSecond: Double,
        burst: Int,
        requested: Int
    ) async throws -> RateGrant {
        try StoreValidation.app(app)
        if let scope {
            try StoreValidation.name(scope, field: "scope", what: "scope")
        }
        guard ratePerSecond.isFinite, ratePerSecond > 0 else {
            throw StoreError(.invalidArgument, field: "ratePerSecond", message: "must be finite and positive, is \(ratePerSecond)")
        }
        try StoreValidation.atLeast(1, burst, field: "burst")
        try StoreValidation.atLeast(1, requested, field: "requested")
        let reply = try await client.runScript(
            RateScripts.acquire,
            keys: [.string(Self.key(app: app, scope: scope))],
            arguments: [.string(String(ratePerSecond)), .integer(burst), .integer(requested)]
        )
        guard let fields = reply.array, fields.count == 2,
            let granted = fields[0].int, let wait = fields[1].int,
            (0...Int64(requested)).contains(granted), wait >= 0
        else {
            throw StoreError.unexpected(reply, from: "the rate script")
        }
        return RateGrant(granted: Int(granted), retryAfter: .microseconds(wait))
    }

    /// The bucket's key: `pf:{<app>:rate}:<scope>`, scope `app` when `nil`.
    static func key(app: String, scope: String?) -> String {
        "pf:{\(app):rate}:" + (scope ?? "app")
    }
}
