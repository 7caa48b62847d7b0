import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import Kafka
import Logging
import NIOCore
import PushConfiguration
import PushCore
import PushGateway
import PushStore
import Redis
import Spawn
import Synchronization

/// The online channel's faults, counted the way the fault suite counts APNs's: each scenario on a
/// fresh embedded stack with one `pushfleet worker` and two `pushfleet gateway` processes
/// (`gw-a`, `gw-b`), every device connected (even devices to `gw-a`, odd ones to `gw-b`), one
/// broadcast, and per device what it received over its connection and what the simulator
/// accepted for it through APNs.
enum OnlineFaultScenario: String, CaseIterable, Codable, Sendable {
    /// `gw-b` SIGKILLed mid-broadcast (online-first); its devices reconnect to `gw-a`.
    case gatewayKill = "gateway-kill"
    /// The same with an online-only job: what `gw-b` had not settled stays in the inboxes and is
    /// replayed when the devices reconnect to `gw-a`.
    case gatewayKillOnlineOnly = "gateway-kill-online-only"
    /// Every presence record deleted under connected devices (a Redis failover without replicas).
    case presenceLost = "presence-lost"
    /// Half the devices never ack (an app that takes the frame and crashes, or an old client).
    case neverAck = "never-ack"

    var delivery: DeliveryRoute { self == .gatewayKillOnlineOnly ? .onlineOnly : .onlineFirst }

    var fault: String {
        switch self {
        case .gatewayKill, .gatewayKillOnlineOnly: "gw-b SIGKILLed once a third of its devices acked; they reconnect to gw-a"
        case .presenceLost: "every presence record deleted before the broadcast"
        case .neverAck: "odd devices never ack"
        }
    }

    /// What a device does with a push.
    func ackPolicy(device: Int) -> LoadConnectionOptions.AckPolicy {
        switch self {
        // As apps that take a moment: the gateway holds unacknowledged sends when it dies.
        case .gatewayKill, .gatewayKillOnlineOnly: .after(.milliseconds(20))
        case .presenceLost: .immediately
        case .neverAck: device.isMultiple(of: 2) ? .immediately : .never
        }
    }

    static func parse(_ list: String) throws -> [OnlineFaultScenario] {
        try list.split(separator: ",").map { name in
            guard let scenario = OnlineFaultScenario(rawValue: String(name)) else {
                throw BenchmarkError.failed(
                    "unknown online fault scenario '\(name)'; known: \(allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return scenario
        }
    }
}

/// What one online fault scenario came to. A device *received* its notification when a push
/// frame of the job reached its connection (live or replayed from its inbox), and *through APNs*
/// when the simulator accepted it for the device.
struct OnlineFaultOutcome: Codable, Sendable {
    var scenario: String
    var delivery: String
    var fault: String
    var devices: Int
    /// Devices that received the push over a connection.
    var receivedOnline: Int
    /// Devices the simulator accepted a notification for.
    var throughAPNs: Int
    /// Devices that got it neither way.
    var missed: Int
    /// Devices that got it both ways.
    var twice: Int
    /// The most that may get it twice: sends written to a connection that no live gateway heard
    /// acknowledged in time (what the killed gateway's devices received from it, the
    /// never-acking devices, and the sends a live gateway handed back after writing them).
    var inFlightAtFault: Int
    /// Sends the live gateways wrote and then handed back to APNs (`no-ack`, `connection-lost`),
    /// and acks they heard too late, from their `/metrics`.
    var handedBackAfterWriting: Int
    var lateAcks: Int
    /// The job's report: `online`, `accepted`, `inboxed`, `inbox-read`.
    var online: Int
    var accepted: Int
    var inboxed: Int
    var inboxRead: Int
    /// Devices that reconnected to `gw-a` after their gateway died.
    var reconnected: Int
    /// From the broadcast's publication to every notification's final outcome.
    var seconds: Double
    var violations: [String]

    /// The scenario's expectations: nothing missed, each notification one final outcome in the
    /// report (online + APNs, or online + inboxed, = the audience), at most what was in flight
    /// got twice, none through APNs for online-only and no more read from the inboxes than was
    /// kept there, none online with presence lost.
    mutating func judge(_ scenario: OnlineFaultScenario) {
        violations = []
        if missed > 0 { violations.append("\(missed) missed") }
        if twice > inFlightAtFault { violations.append("\(twice) got it twice, more than the \(inFlightAtFault) in flight") }
        switch scenario.delivery {
        case .onlineOnly:
            if throughAPNs > 0 { violations.append("\(throughAPNs) went through APNs") }
            if online + inboxed != devices { violations.append("online \(online) + inboxed \(inboxed) ≠ \(devices)") }
            // What was read from the inboxes was kept there: an acked message is never counted both ways.
            if inboxRead > inboxed { violations.append("inbox-read \(inboxRead) > inboxed \(inboxed)") }
        default:
            if online + accepted != devices { violations.append("online \(online) + accepted \(accepted) ≠ \(devices)") }
        }
        if scenario == .presenceLost && (online > 0 || receivedOnline > 0) {
            violations.append("\(receivedOnline) received online without presence")
        }
    }

    var line: String {
        String(
            format:
                "%@ (%@): received online %d, through APNs %d, missed %d, twice %d (in flight %d; handed back %d, late acks %d), report online %d accepted %d inboxed %d inbox-read %d, reconnected %d, %.1f s%@",
            scenario, delivery, receivedOnline, throughAPNs, missed, twice, inFlightAtFault, handedBackAfterWriting, lateAcks, online, accepted,
            inboxed, inboxRead, reconnected, seconds, violations.isEmpty ? "" : " — FAILED: " + violations.joined(separator: "; "))
    }
}

/// Runs one ``OnlineFaultScenario``.
struct OnlineFaultRun {
    let scenario: OnlineFaultScenario
    let devices: Int
    let pushfleet: String
    let logger: Logger

    /// The gateways' ack timeout in these runs (sends fall back to APNs twice that after their
    /// hand-over): short, so that a scenario lasts seconds.
    static let ackTimeoutMilliseconds = 1_000

    func run() async throws -> OnlineFaultOutcome {
        var options = EmbeddedStack.Options()
        // Chunks of 100: a broadcast reaches the gateways as many messages, so a kill finds
        // some settled, some waiting for acks and some not yet written.
        options.workerSettings += ["chunk-size: 100"]
        let stack = try await EmbeddedStack.start(options, logger: logger)
        let shared = ["PUSHFLEET__GATEWAY__ACK_TIMEOUT_MS": String(Self.ackTimeoutMilliseconds)]
        let fleet = WorkerFleet(binary: pushfleet, stack: stack, logLevel: "warning", environment: shared)
        return try await CampaignHarness.withClients(stack: stack, fleet: fleet, logger: logger) { producer, redis in
            defer { fleet.stopAll() }
            try await CampaignHarness.startOneWorker(registering: devices, stack: stack, fleet: fleet, producer: producer, redis: redis)
            let gatewayA = try await GatewayProcess.start(binary: pushfleet, stack: stack, id: "gw-a", environment: shared)
            defer { gatewayA.process.terminate() }
            let gatewayB = try await GatewayProcess.start(binary: pushfleet, stack: stack, id: "gw-b", environment: shared)
            defer { gatewayB.process.terminate() }
            // The warm-up's notification is not the scenario's.
            try await stack.simulator.reset()

            let load = WebSocketLoad(threads: 1)
            let tokens = ConnectToken(secret: try stack.configuration.gateway.resolvedSecret())
            let path = { @Sendable (device: Int) in
                let claims = ConnectToken.Claims(
                    app: EmbeddedStack.app, device: CampaignHarness.token(device), expiresAt: Int64(Date().timeIntervalSince1970) + 3_600)
                return "/v1/apps/\(EmbeddedStack.app)/connect?token=\(tokens.issue(claims))"
            }
            // A device of gw-b whose connection ends while gw-b is down reconnects to gw-a.
            let gatewayBDown = Atomic(false)
            let reconnects = ReconnectTally()
            let scenario = self.scenario
            for start in stride(from: 0, to: devices, by: 200) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for device in start..<min(start + 200, devices) {
                        let onB = !device.isMultiple(of: 2)
                        var connection = LoadConnectionOptions(device: device, label: onB ? "gw-b" : "gw-a", ack: scenario.ackPolicy(device: device))
                        let again = LoadConnectionOptions(device: device, label: "gw-a", ack: connection.ack)
                        if onB {
                            connection.closed = {
                                guard gatewayBDown.load(ordering: .acquiring) else { return }
                                reconnects.start {
                                    try await load.connect(port: gatewayA.port, path: path(device), awaitWelcome: true, options: again)
                                }
                            }
                        }
                        group.addTask {
                            try await load.connect(
                                port: onB ? gatewayB.port : gatewayA.port, path: path(device), awaitWelcome: true, options: connection)
                        }
                    }
                    try await group.waitForAll()
                }
            }
            try await waitUntil("every device's presence written") {
                try await self.presentDevices(redis) == devices
            }
            if scenario == .presenceLost {
                try await deletePresence(redis)
                guard try await presentDevices(redis) == 0 else { throw BenchmarkError.failed("presence records left after deleting them") }
            }
            _ = load.tally.takeDeviceCounts()

            let jobID = "online-fault-\(scenario.rawValue)"
            var job = OnlineBenchmark.job(jobID, audience: .broadcast)
            job.delivery = scenario.delivery
            let start = ContinuousClock.now
            try await CampaignHarness.publish(job, producer: producer)
            switch scenario {
            case .gatewayKill, .gatewayKillOnlineOnly:
                let onB = devices / 2
                try await waitUntil("a third of gw-b's devices acked") {
                    load.tally.ackedCount(where: { !$0.isMultiple(of: 2) }) >= onB / 3
                }
                gatewayBDown.store(true, ordering: .releasing)
                gatewayB.process.signal(SIGKILL)
                _ = await gatewayB.process.exited()
            case .neverAck, .presenceLost:
                break
            }
            let jobs = JobStore(client: redis)
            var report: [String: Int] = [:]
            try await waitUntil("job \(jobID) settled", state: { "report \(report), \(load.tally.received.count) devices received" }) {
                report = try await jobs.statistics(jobID: jobID)
                let settled =
                    scenario.delivery == .onlineOnly
                    ? (report["online"] ?? 0) + (report["inboxed"] ?? 0) : (report["online"] ?? 0) + (report["accepted"] ?? 0)
                guard settled >= devices else { return false }
                // Online-only: the reconnected devices' inboxes replayed too.
                return scenario.delivery != .onlineOnly || load.tally.received.count >= devices
            }
            let seconds = (ContinuousClock.now - start).seconds
            // Late effects (a fallback after the report, a replay) would show as twice: wait a
            // fallback's length before counting.
            try await Task.sleep(for: .milliseconds(3 * Self.ackTimeoutMilliseconds))
            report = try await jobs.statistics(jobID: jobID)
            // What the live gateways wrote and handed back (an ack too late: a gateway slowed by
            // the reconnections), and what the killed one may have written and not settled:
            // whatever its devices received from it, before it died or from its socket buffers
            // after (an ack it heard may not have been settled).
            var live = try await gatewayA.sendOutcomes()
            if gatewayB.process.isRunning { live.merge(try await gatewayB.sendOutcomes(), uniquingKeysWith: +) }
            let handedBack = (live["no-ack"] ?? 0) + (live["connection-lost"] ?? 0)
            let inFlight =
                switch scenario {
                case .gatewayKill, .gatewayKillOnlineOnly: load.tally.received(via: "gw-b").count + handedBack
                case .neverAck: devices / 2
                case .presenceLost: 0
                }
            let received = Set(load.tally.takeDeviceCounts().received.filter { $0.value > 0 }.keys)
            let accepted = try await stack.simulator.counters().acceptedPerToken
            let apns = Set((0..<devices).filter { (accepted[CampaignHarness.token($0).hex] ?? 0) > 0 })
            await load.shutdown()
            var outcome = OnlineFaultOutcome(
                scenario: scenario.rawValue, delivery: scenario.delivery.rawValue, fault: scenario.fault, devices: devices,
                receivedOnline: received.count, throughAPNs: apns.count, missed: devices - received.union(apns).count,
                twice: received.intersection(apns).count, inFlightAtFault: inFlight, handedBackAfterWriting: handedBack,
                lateAcks: live["late-acks"] ?? 0, online: report["online"] ?? 0,
                accepted: report["accepted"] ?? 0, inboxed: report["inboxed"] ?? 0, inboxRead: report["inbox-read"] ?? 0,
                reconnected: reconnects.count, seconds: seconds, violations: [])
            outcome.judge(scenario)
            return outcome
        }
    }

    /// How many of the devices have a presence record.
    private func presentDevices(_ redis: any RedisCommands) async throws -> Int {
        let presence = PresenceStore(client: redis)
        let all = (0..<devices).map(CampaignHarness.token)
        var found = 0
        for start in stride(from: 0, to: all.count, by: 1_000) {
            found += try await presence.lookup(app: EmbeddedStack.app, tokens: Array(all[start..<min(start + 1_000, all.count)])).count
        }
        return found
    }

    /// Deletes every presence record (the stack's one redis-server).
    private func deletePresence(_ redis: any RedisCommands) async throws {
        let keys = try await redis.send("KEYS", "pf:{on:*").array?.compactMap(\.string) ?? []
        for start in stride(from: 0, to: keys.count, by: 1_000) {
            _ = try await redis.send(["DEL"] + keys[start..<min(start + 1_000, keys.count)].map { .string($0) })
        }
    }

    private func waitUntil(
        _ what: String, timeout: Duration = .seconds(120), state: () -> String = { "" }, _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError.failed("\(scenario.rawValue): \(what): not within \(timeout) \(state())")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// The reconnections the fault scenarios start from connection handlers, counted, each retried
/// until it connects (gw-a may be busy with the others).
final class ReconnectTally: Sendable {
    private let done = Atomic(0)

    var count: Int { done.load(ordering: .relaxed) }

    func start(_ connect: @escaping @Sendable () async throws -> Void) {
        Task {
            for attempt in 1...50 {
                do {
                    try await connect()
                    done.add(1, ordering: .relaxed)
                    return
                } catch {
                    try? await Task.sleep(for: .milliseconds(20 * attempt))
                }
            }
        }
    }
}
