import APNs
import APNsCore
import APNsSimulator
import Foundation
import Testing

/// Delivery under injected faults: every notification accepted exactly once, none failed.
@Suite("APNs resilience under faults", .serialized)
struct APNsResilienceTests {
    /// 100 000 by default; `APNS_RESILIENCE_COUNT` changes it (e.g. for a quick local run).
    static let count = ProcessInfo.processInfo.environment["APNS_RESILIENCE_COUNT"].flatMap(Int.init) ?? 100_000

    @Test("5% 503, GOAWAY every 5 000 streams, a reset every 20 000: all accepted exactly once")
    func faultProfile() async throws {
        try await SimulatorHarness.with(
            simulator: {
                $0.faults = APNsSimulatorFaults(
                    serviceUnavailableRate: 0.05, goAwayEveryStreams: 5_000, connectionResetEveryStreams: 20_000)
            },
            client: {
                $0.connectionsPerPool = 4
                // The client retries retryable outcomes itself: 0.05^12 leaves no 503 standing.
                $0.maxAttempts = 12
                $0.retryBackoffBase = .milliseconds(1)
                // A timed-out request may still be accepted later, and its retry would be a
                // duplicate: give slow (debug) builds room so that no request times out.
                $0.requestTimeout = .seconds(120)
            }
        ) { harness in
            let failures = try await Self.sendAll(count: Self.count, window: 400, harness: harness)
            #expect(failures.count == 0, "first failures: \(failures.prefix(3))")
            let counters = try await harness.simulator.counters()
            #expect(counters.accepted == Self.count)
            #expect(counters.distinctAccepted == Self.count)
            #expect(counters.duplicates == 0)
            #expect(counters.acceptedPerToken.count == Self.count)
            #expect(counters.acceptedPerToken.values.allSatisfy { $0 == 1 })
            #expect(counters.goAways >= Self.count / 5_000 - Self.count / 20_000)
            #expect(counters.connectionResets >= Self.count / 20_000)
            #expect(counters.rejections["ServiceUnavailable", default: 0] > 0)
        }
    }

    /// Sends `count` notifications to distinct tokens, at most `window` at a time; returns the
    /// failures (errors and non-200 answers).
    static func sendAll(count: Int, window: Int, harness: SimulatorHarness) async throws -> [String] {
        try await withThrowingTaskGroup(of: String?.self) { group in
            var failures: [String] = []
            var next = 0
            func addTask() {
                let request = harness.request(token: SimulatorHarness.token(next))
                next += 1
                group.addTask {
                    do {
                        let response = try await harness.client.send(request)
                        return response.status == 200 ? nil : "\(response.status) \(response.reason?.rawValue ?? "")"
                    } catch {
                        return "\(error)"
                    }
                }
            }
            while next < min(window, count) { addTask() }
            while let result = try await group.next() {
                if let result { failures.append(result) }
                if next < count { addTask() }
            }
            return failures
        }
    }
}

@Suite("Simulator faults changed while running")
struct SimulatorRuntimeFaultTests {
    @Test("setFaults switches a storm on and off on open connections: 429, revoked provider key, slow answers")
    func faultsChangeWhileRunning() async throws {
        try await SimulatorHarness.with(client: { $0.maxAttempts = 1 }) { harness in
            func status(_ n: Int) async throws -> (Int, String?) {
                let response = try await harness.client.send(harness.request(token: SimulatorHarness.token(n)))
                return (Int(response.status), response.reason?.rawValue)
            }
            #expect(try await status(0) == (200, nil))
            try await harness.simulator.setFaults(APNsSimulatorFaults(tooManyRequestsRate: 1))
            #expect(try await status(1) == (429, "TooManyRequests"))
            try await harness.simulator.setFaults(APNsSimulatorFaults(rejectsProviderTokens: true))
            #expect(try await status(2) == (403, "InvalidProviderToken"))
            try await harness.simulator.setFaults(APNsSimulatorFaults(), latency: .uniform(.milliseconds(300), .milliseconds(300)))
            let started = ContinuousClock.now
            #expect(try await status(3) == (200, nil))
            #expect(ContinuousClock.now - started >= .milliseconds(300), "the new answer time applies")
            let counters = try await harness.simulator.counters()
            #expect(counters.rejections == ["TooManyRequests": 1, "InvalidProviderToken": 1])
            #expect(counters.accepted == 2)
        }
    }
}
