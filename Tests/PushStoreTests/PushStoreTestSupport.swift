import APNsCore
import Redis
import Synchronization
import Testing

@testable import PushStore

/// A clock the test moves by hand (milliseconds since 1970).
final class ManualClock: Sendable {
    private let value: Mutex<Int64>

    init(_ start: Int64 = 1_700_000_000_000) {
        value = Mutex(start)
    }

    var now: Int64 { value.withLock { $0 } }

    func advance(by milliseconds: Int64) {
        value.withLock { $0 += milliseconds }
    }

    var function: @Sendable () -> Int64 { { self.now } }
}

/// Runs `body` with a registry over a fresh `redis-server` (or cluster, see ``TestRedis``), and a
/// client to inspect it with.
func withRegistry<Value>(
    configuration: DeviceRegistryConfiguration = DeviceRegistryConfiguration(),
    clock: ManualClock = ManualClock(),
    _ body: (DeviceRegistry, any RedisCommands) async throws -> Value
) async throws -> Value {
    try await withRedis { client in
        try await body(DeviceRegistry(client: client, configuration: configuration, clock: clock.function), client)
    }
}

/// A 32-byte token whose value is `number` (64 hex digits).
func token(_ number: Int) -> DeviceToken {
    let digits = String(number, radix: 16)
    return try! DeviceToken(hex: String(repeating: "0", count: 64 - digits.count) + digits)
}

/// Evaluates `expression` and returns the ``StoreError`` it throws; records an issue and
/// returns `nil` if it succeeds or throws something else.
func registryError<Value>(
    _ expression: () async throws -> Value,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> StoreError? {
    do {
        let value = try await expression()
        Issue.record("expected a StoreError, got \(value)", sourceLocation: sourceLocation)
    } catch let error as StoreError {
        return error
    } catch {
        Issue.record("expected a StoreError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

extension RedisCommands {
    /// The members of a set, as a Swift set of strings.
    func members(_ key: String) async throws -> Set<String> {
        Set(try await send("SMEMBERS", .string(key)).array?.compactMap(\.string) ?? [])
    }

    /// The value of a string key, or `nil`.
    func string(_ key: String) async throws -> String? {
        try await send("GET", .string(key)).string
    }
}

extension DeviceRegistry {
    /// Every device of `environment` matching `filter` with its id, read the way a broadcast
    /// reads them: every shard task of the app's layout, `count` devices a page. Records an
    /// issue when a token comes twice.
    func audience(
        app: String, environment: APNsEnvironment, filter: ScanFilter = .devices, count: Int = 50,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [DeviceToken: UInt32] {
        var found: [DeviceToken: UInt32] = [:]
        let tasks = try await layout(app: app).taskCount
        for shard in 0..<tasks {
            for try await page in pages(app: app, task: ShardTask(shard: shard, of: tasks), environment: environment, filter: filter, pageSize: count)
            {
                for (token, id) in zip(page.tokens, page.ids) where found.updateValue(id, forKey: token) != nil {
                    Issue.record("\(token.hex) scanned twice", sourceLocation: sourceLocation)
                }
            }
        }
        return found
    }

    /// The tokens of ``audience(app:environment:filter:count:sourceLocation:)``.
    func audienceTokens(app: String, environment: APNsEnvironment, filter: ScanFilter = .devices) async throws -> Set<DeviceToken> {
        Set(try await audience(app: app, environment: environment, filter: filter).keys)
    }

    /// The packed record of `token` as stored in its home shard's bucket, or `nil`.
    func storedRecord(_ token: DeviceToken, app: String, client: any RedisCommands) async throws -> [UInt8]? {
        let keys = ShardKeyspace(app: app, shard: try await layout(app: app).home(of: token))
        return try await client.send("HGET", .string(keys.bucket(of: token)), .bytes(token.markerBytes)).bytes
    }

    /// The token an openid maps to, ignoring the generation.
    func mappedToken(app: String, openID: String, client: any RedisCommands) async throws -> DeviceToken? {
        try await client.string(openIDKey(app: app, openID: openID)).flatMap { Self.parseMapping($0)?.token }
    }
}
