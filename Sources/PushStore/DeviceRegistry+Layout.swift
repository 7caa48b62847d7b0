import FlowControl
import Redis
import Synchronization

/// Where an app's layout comes from. It is stored (`pf:{<app>}:layout`) by the first write to
/// the app, with the shard count the configuration gives it then; from then on the stored
/// layout wins over the configuration, and only a reshard changes it. A process keeps the
/// stored layouts it has read and reads one again when a shard answers that it belongs to a
/// newer epoch (``StaleLayout``).
extension DeviceRegistry {
    /// The app's layout: the stored one, or the configuration's shard count while nothing has
    /// been written to the app.
    ///
    /// - Throws: ``StoreError`` naming `app`, or `unexpectedReply` for a layout that
    ///   cannot be read; `RedisClientError`.
    package func layout(app: String) async throws -> RegistryLayout {
        try StoreValidation.app(app)
        if let known = layouts.withLock({ $0[app] }) {
            return known
        }
        return try await refreshLayout(app: app)
    }

    /// Reads the app's layout again from Redis (``layout(app:)`` answers the one this process
    /// read last), and remembers it.
    ///
    /// - Throws: like ``layout(app:)``.
    package func refreshLayout(app: String) async throws -> RegistryLayout {
        try StoreValidation.app(app)
        let key = AppKeyspace(app: app).layout
        let reply = try await client.send("HGETALL", .string(key))
        guard let fields = reply.array, fields.count.isMultiple(of: 2) else { throw StoreError.unexpected(reply, from: "HGETALL of \(key)") }
        guard !fields.isEmpty else {
            return RegistryLayout(shards: configuration.shardCount(for: app))
        }
        var values: [String: String] = [:]
        for index in stride(from: 0, to: fields.count, by: 2) {
            guard let name = fields[index].string, let value = fields[index + 1].string else {
                throw StoreError.unexpected(reply, from: "HGETALL of \(key)")
            }
            values[name] = value
        }
        guard let layout = RegistryLayout(fields: values) else {
            throw StoreError(.unexpectedReply, field: nil, message: "the layout of app \(app) cannot be read: \(values)")
        }
        layouts.withLock { $0[app] = layout }
        return layout
    }

    /// The app's layout, stored first if it is not yet (before devices are written by it).
    func writableLayout(app: String) async throws -> RegistryLayout {
        if let known = layouts.withLock({ $0[app] }) {
            return known
        }
        let create = RedisScriptCall(
            RegistryScripts.createLayout, keys: [.string(AppKeyspace(app: app).layout)],
            arguments: [.integer(configuration.shardCount(for: app)), .string(DeviceIDForm.bucketed.rawValue)])
        _ = try await run([create])
        return try await refreshLayout(app: app)
    }

    /// Runs `body` with the app's layout, and again with the layout read anew while `body`
    /// throws ``StaleLayout`` (a reshard started or ended): at once when the layout changed,
    /// after a short wait when it did not yet (a reshard is moving its shards to the new epoch).
    func withLayout<Value>(
        app: String, writable: Bool = false, _ body: (RegistryLayout) async throws -> Value
    ) async throws -> Value {
        var layout = writable ? try await writableLayout(app: app) : try await self.layout(app: app)
        for attempt in 0..<Self.layoutAttempts {
            do {
                return try await body(layout)
            } catch is StaleLayout {
                let fresh = try await refreshLayout(app: app)
                if fresh == layout {
                    try await Task.sleep(for: Self.layoutWait(attempt))
                }
                layout = fresh
            }
        }
        throw StoreError(
            .busy, field: nil, message: "the layout of app \(app) kept changing (a reshard entering its epoch); try again")
    }

    /// How often ``withLayout(app:writable:_:)`` reads the layout again.
    static let layoutAttempts = 24

    /// The wait before attempt `attempt + 1` when the layout has not changed yet: 5 ms doubling
    /// to 400 ms (about 7 s over the 24 attempts).
    static func layoutWait(_ attempt: Int) -> Duration {
        layoutBackoff.delay(attempt: attempt + 1)
    }

    private static let layoutBackoff = ExponentialBackoff(base: .milliseconds(5), maximum: .milliseconds(400))
}

/// A shard answered that it belongs to a newer layout epoch than the caller's.
struct StaleLayout: Error {}
