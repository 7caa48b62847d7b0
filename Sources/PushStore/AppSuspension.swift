import Redis

/// Suspends sending for an app fleet-wide, e.g. after APNs rejected its certificate or topic:
/// one string key per app holding the reason, expiring when the suspension ends.
///
/// Workers check ``reason(app:)`` before sending; the key `pf:{<app>}:suspended` is in the app's
/// own slot `{<app>}`.
public final class AppSuspension: Sendable {
    let client: any RedisCommands

    /// Creates a suspension switch over `client`.
    public init(client: any RedisCommands) {
        self.client = client
    }

    /// Suspends sending for the app fleet-wide for `duration` (at least 1 ms; rounded down to
    /// whole milliseconds) with a reason (`SET PX`). Suspending again replaces the reason and
    /// the duration.
    ///
    /// - Throws: ``StoreError`` naming `app` or `duration`; `RedisClientError`.
    public func suspend(app: String, for duration: Duration, reason: String) async throws {
        try StoreValidation.app(app)
        let milliseconds = duration.wholeMilliseconds
        guard milliseconds >= 1 else {
            throw StoreError(.invalidArgument, field: "duration", message: "must be at least 1 ms, is \(duration)")
        }
        _ = try await client.send("SET", .string(Self.key(app: app)), .string(reason), "PX", .string(String(milliseconds)))
    }

    /// The reason when suspended, nil otherwise.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    public func reason(app: String) async throws -> String? {
        try StoreValidation.app(app)
        let reply = try await client.send("GET", .string(Self.key(app: app)))
        if reply.isNull {
            return nil
        }
        guard let reason = reply.string else {
            throw StoreError.unexpected(reply, from: "GET of app \(app)'s suspension")
        }
        return reason
    }

    /// Ends a suspension early; lifting an app that is not suspended does nothing.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    public func lift(app: String) async throws {
        try StoreValidation.app(app)
        _ = try await client.send("DEL", .string(Self.key(app: app)))
    }

    /// `pf:{<app>}:suspended`
    static func key(app: String) -> String {
        "pf:{\(app)}:suspended"
    }
}
