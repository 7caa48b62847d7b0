import APNsCore
import Redis
import Testing

@testable import PushStore

/// Concurrent binds and unbinds, run step by step in every interleaving of their single-slot
/// steps (no threads, no sleeping): afterwards the openid mappings and the devices' openids must
/// agree, and the last writer must have won.
@Suite("OpenID steps converge in every interleaving")
struct OpenIDConvergenceTests {
    static let app = "converge"
    static let (a, b) = (token(0xA), token(0xB))

    /// One bind or unbind, advanced a step at a time.
    final class Operation {
        enum Kind {
            case bind(DeviceToken, String)
            case unbind(DeviceToken)
        }

        let kind: Kind
        let registry: DeviceRegistry
        private var bindings: [OpenIDBinding] = []
        private var displaced: [(token: DeviceToken, generation: Int64)?] = []
        private var removal: (removed: Bool, openID: String?, generation: Int64)?

        init(_ kind: Kind, registry: DeviceRegistry) {
            self.kind = kind
            self.registry = registry
        }

        var stepCount: Int {
            switch kind {
            case .bind: 4
            case .unbind: 2
            }
        }

        func step(_ index: Int) async throws {
            let app = OpenIDConvergenceTests.app
            switch (kind, index) {
            case (.bind(let token, let openID), 0):
                bindings = try await registry.shardStep([DeviceRegistration(token: token, environment: .production, openID: openID)], app: app)
            case (.bind, 1):
                displaced = try await registry.claimStep(bindings, app: app)
            case (.bind, 2):
                try await registry.cleanupStep(bindings, displaced: displaced, app: app)
            case (.bind, 3):
                try await registry.verifyStep(bindings, app: app)
            case (.unbind(let token), 0):
                removal = try await registry.unbindShardStep(app: app, token: token, environment: nil, invalidSince: nil)
            case (.unbind(let token), 1):
                if let removal, removal.removed, let openID = removal.openID {
                    _ = try await registry.run([registry.releaseCall(app: app, openID: openID, token: token, generation: removal.generation)])
                }
            default:
                fatalError("no step \(index)")
            }
        }
    }

    /// Every order of `first` steps of one operation and `second` of the other, each keeping its own order.
    static func interleavings(_ first: Int, _ second: Int) -> [[Int]] {
        if first == 0 { return [Array(repeating: 1, count: second)] }
        if second == 0 { return [Array(repeating: 0, count: first)] }
        return interleavings(first - 1, second).map { [0] + $0 } + interleavings(first, second - 1).map { [1] + $0 }
    }

    struct State: Equatable, CustomStringConvertible {
        /// openid → token of every mapping.
        var mappings: [String: DeviceToken] = [:]
        /// token → openid of every registered device (`""` for none).
        var devices: [DeviceToken: String] = [:]

        var description: String { "mappings \(mappings), devices \(devices)" }
    }

    static func state(_ registry: DeviceRegistry, _ client: any RedisCommands) async throws -> State {
        var state = State()
        for openID in ["U", "V", "W"] {
            state.mappings[openID] = try await registry.mappedToken(app: app, openID: openID, client: client)
        }
        for device in [a, b] {
            if let record = try await registry.device(app: app, token: device) {
                state.devices[device] = record.openID ?? ""
            }
        }
        return state
    }

    /// Runs every interleaving of `first` and `second` after `setUp`; `expected` gets the position
    /// of each operation's deciding step (`decidingStep`) in the schedule and returns the state
    /// that must result.
    func check(
        setUp: [DeviceRegistration],
        first: Operation.Kind,
        second: Operation.Kind,
        expected: (_ firstDecidedLast: Bool) -> State,
        decidingStep: (Operation.Kind) -> Int
    ) async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 4)) { registry, client in
            let operations = [Operation(first, registry: registry), Operation(second, registry: registry)]
            let schedules = Self.interleavings(operations[0].stepCount, operations[1].stepCount)
            #expect(schedules.count > 10)
            for schedule in schedules {
                try await client.flushEverything()
                try await registry.bind(setUp, app: Self.app)
                let run = [Operation(first, registry: registry), Operation(second, registry: registry)]
                var next = [0, 0]
                var decidedAt = [0, 0]
                for (position, which) in schedule.enumerated() {
                    if next[which] == decidingStep(run[which].kind) {
                        decidedAt[which] = position
                    }
                    try await run[which].step(next[which])
                    next[which] += 1
                }
                let state = try await Self.state(registry, client)
                // Consistency: every mapping names a device that names the openid back, and vice versa.
                for (openID, device) in state.mappings {
                    #expect(state.devices[device] == openID, "schedule \(schedule): \(state)")
                }
                for (device, openID) in state.devices where !openID.isEmpty {
                    #expect(state.mappings[openID] == device, "schedule \(schedule): \(state)")
                }
                #expect(state == expected(decidedAt[0] > decidedAt[1]), "schedule \(schedule)")
            }
        }
    }

    /// The step whose order decides the winner: the shard step for one device, the claim for one openid.
    static func shardStep(_ kind: Operation.Kind) -> Int { 0 }
    static func claimStep(_ kind: Operation.Kind) -> Int {
        if case .bind = kind { 1 } else { 0 }
    }

    /// The device starts with a third user, or with one of the two (a user logging back in).
    @Test(arguments: ["W", "U", "V"])
    func oneDeviceTwoUsers(initialUser: String) async throws {
        let a = Self.a
        try await check(
            setUp: [DeviceRegistration(token: a, environment: .production, openID: initialUser)],
            first: .bind(a, "U"),
            second: .bind(a, "V"),
            expected: { firstLast in
                firstLast ? State(mappings: ["U": a], devices: [a: "U"]) : State(mappings: ["V": a], devices: [a: "V"])
            },
            decidingStep: Self.shardStep
        )
    }

    @Test func oneUserTwoDevices() async throws {
        let (a, b) = (Self.a, Self.b)
        try await check(
            setUp: [],
            first: .bind(a, "U"),
            second: .bind(b, "U"),
            expected: { firstLast in
                firstLast ? State(mappings: ["U": a], devices: [a: "U", b: ""]) : State(mappings: ["U": b], devices: [a: "", b: "U"])
            },
            decidingStep: Self.claimStep
        )
    }

    @Test func bindAgainstUnbind() async throws {
        let a = Self.a
        try await check(
            setUp: [DeviceRegistration(token: a, environment: .production, openID: "W")],
            first: .bind(a, "U"),
            second: .unbind(a),
            expected: { bindLast in
                bindLast ? State(mappings: ["U": a], devices: [a: "U"]) : State()
            },
            decidingStep: Self.shardStep
        )
    }

    @Test func crossedLogins() async throws {
        // U is on B and V on A; U logs in on A while B switches to V: both devices change hands.
        let (a, b) = (Self.a, Self.b)
        try await check(
            setUp: [
                DeviceRegistration(token: b, environment: .production, openID: "U"),
                DeviceRegistration(token: a, environment: .production, openID: "V"),
            ],
            first: .bind(a, "U"),
            second: .bind(b, "V"),
            expected: { _ in State(mappings: ["U": a, "V": b], devices: [a: "U", b: "V"]) },
            decidingStep: Self.shardStep
        )
    }
}
