import APNsCore
import FlowControl
import Redis

/// Suspends an app's sending to one APNs environment fleet-wide, e.g. after APNs refused the
/// credential it sends there with: one string key per app and environment holding the reason,
/// expiring when the suspension ends. An app's environments may hold different credentials
/// (a development and a production certificate), so a refusal in one leaves the other sending.
///
/// Workers check ``reason(app:environment:)`` before sending; the key
/// `pf:{<app>}:suspended:<environment>` is in the app's own slot `{<app>}`.
package final class AppSuspension: Sendable {
    let client: any RedisCommands

    /// Creates a suspension switch over `client`.
    package init(client: any RedisCommands) {
        self.client = client
    }

    /// Suspends the app's sending to `environment` fleet-wide for `duration` (at least 1 ms; rounded down to
    /// whole milliseconds) with a reason (`SET PX`). Suspending again replaces the reason and
    /// the duration.
    ///
    /// - Throws: ``StoreError`` naming `app` or `duration`; `RedisClientError`.
    package func suspend(app: String, environment: APNsEnvironment, for duration: Duration, reason: String) async throws {
        try StoreValidation.app(app)
        let milliseconds = duration.wholeMilliseconds
        guard milliseconds >= 1 else {
            throw StoreError(.invalidArgument, field: "duration", message: "must be at least 1 ms, is \(duration)")
        }
        _ = try await client.send("SET", .string(Self.key(app: app, environment: environment)), .string(reason), "PX", .string(String(milliseconds)))
    }

    /// The reason when suspended, nil otherwise.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func reason(app: String, environment: APNsEnvironment) async throws -> String? {
        try StoreValidation.app(app)
        let reply = try await client.send("GET", .string(Self.key(app: app, environment: environment)))
        if reply.isNull {
            return nil
        }
        guard let reason = reply.string else {
            throw StoreError.unexpected(reply, from: "GET of app \(app)'s suspension in \(environment.rawValue)")
        }
        return reason
    }

    /// Ends a suspension early; lifting an app that is not suspended does nothing.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func lift(app: String, environment: APNsEnvironment) async throws {
        try StoreValidation.app(app)
        _ = try await client.send("DEL", .string(Self.key(app: app, environment: environment)))
    }

    /// `pf:{<app>}:suspended:<environment>`
    static func key(app: String, environment: APNsEnvironment) -> String {
        "pf:{\(app)}:suspended:\(environment.rawValue)"
    }
}
