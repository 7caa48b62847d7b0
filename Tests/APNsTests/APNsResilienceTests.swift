import APNs
import APNsCore
import APNsSimulator
import Foundation
import NIOCore
import Synchronization
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

    @Test("copies of a notification sharing an apns-collapse-id count as sent twice but shown once")
    func shownTwiceCountsCopiesWithoutASharedCollapseID() async throws {
        try await SimulatorHarness.with { harness in
            // Token 1: two copies with one collapse id (shown once). Token 2: two copies without
            // one (shown twice). Token 3: two different collapse ids (shown twice). Token 4: once.
            var collapsed = harness.request(token: SimulatorHarness.token(1))
            collapsed.collapseID = "campaign-7"
            var other = harness.request(token: SimulatorHarness.token(3))
            other.collapseID = "campaign-8"
            var second = other
            second.collapseID = "campaign-9"
            for request in [
                collapsed, collapsed, harness.request(token: SimulatorHarness.token(2)), harness.request(token: SimulatorHarness.token(2)),
                other, second, harness.request(token: SimulatorHarness.token(4)),
            ] {
                #expect(try await harness.client.send(request).status == 200)
            }
            let counters = try await harness.simulator.counters()
            #expect(counters.acceptedPerToken.values.filter { $0 > 1 }.count == 3)
            #expect(counters.shownTwice == 2)
            try await harness.simulator.reset()
            #expect(try await harness.simulator.counters().shownTwice == 0)
        }
    }

    @Test("batches under the same faults: every result once, at its index; all accepted exactly once")
    func batchesUnderFaults() async throws {
        let count = min(Self.count, 50_000)
        try await SimulatorHarness.with(
            simulator: {
                $0.faults = APNsSimulatorFaults(
                    serviceUnavailableRate: 0.05, goAwayEveryStreams: 2_000, connectionResetEveryStreams: 10_000)
            },
            client: {
                $0.connectionsPerPool = 4
                $0.maxConcurrentStreamsPerConnection = 50
                $0.maxAttempts = 12
                $0.retryBackoffBase = .milliseconds(1)
                $0.requestTimeout = .seconds(120)
            }
        ) { harness in
            // Batches of 250, four at a time: more than the pool's 200 streams, so batches wait
            // for streams and are served many at a time.
            let results = CallbackResults<Int>()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for batchStart in stride(from: 0, to: count, by: 1_000) {
                    for quarter in 0..<4 {
                        let first = batchStart + quarter * 250
                        guard first < count else { break }
                        let tokens = (first..<min(first + 250, count)).map { SimulatorHarness.token($0) }
                        let notification = harness.request()
                        group.addTask {
                            await harness.client.send(notification, to: tokens) { index, result in
                                let status = (try? result.get())?.status ?? -1
                                results.update { $0[first + index, default: 0] += status == 200 ? 1 : 1_000 }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            let all = results.all
            #expect(all.count == count)
            #expect(all.values.allSatisfy { $0 == 1 }, "\(all.filter { $0.value != 1 }.prefix(5))")
            let counters = try await harness.simulator.counters()
            #expect(counters.distinctAccepted == count)
            #expect(counters.duplicates == 0)
            #expect(counters.goAways > 0 && counters.connectionResets > 0)
            #expect(counters.rejections["ServiceUnavailable", default: 0] > 0)
        }
    }

    @Test("a batch's answers reach their own indexes, refusals included; no devices, no results")
    func batchAnswersByIndex() async throws {
        let tokens = (0..<300).map { SimulatorHarness.token($0) }
        // Every tenth device is unregistered: APNs answers 410 with its reason.
        let unregistered = stride(from: 0, to: tokens.count, by: 10).map { tokens[$0].hex }
        try await SimulatorHarness.with(
            simulator: { $0.devices.unregistered = Dictionary(uniqueKeysWithValues: unregistered.map { ($0, 1_700_000_000_000) }) },
            client: { $0.maxAttempts = 1 }
        ) { harness in
            await harness.client.send(harness.request(), to: []) { _, _ in Issue.record("no devices, no results") }
            let results = CallbackResults<String>()
            await harness.client.send(harness.request(), to: tokens) { index, result in
                let text: String
                switch result {
                case .success(let response): text = "\(response.status) \(response.reason?.rawValue ?? "")"
                case .failure(let error): text = "\(error)"
                }
                results.update { $0[index] = text }
            }
            let all = results.all
            #expect(all.count == 300)
            for index in 0..<300 {
                #expect(all[index] == (index % 10 == 0 ? "410 Unregistered" : "200 "), "device \(index)")
            }
            let counters = try await harness.simulator.counters()
            #expect(counters.distinctAccepted == 270)
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

@Suite("Retry-After on APNs's answers")
struct RetryAfterTests {
    @Test("a short Retry-After is waited out between attempts; a long one, seconds or a date, goes back to the caller")
    func retryAfter() async throws {
        try await SimulatorHarness.with(
            simulator: { $0.faults = APNsSimulatorFaults(tooManyRequestsRate: 1, retryAfter: "1") },
            client: { $0.maxAttempts = 2 }
        ) { harness in
            let started = ContinuousClock.now
            let waited = try await harness.client.send(harness.request(token: SimulatorHarness.token(1)))
            #expect(waited.status == 429 && waited.attempts == 2)
            #expect(waited.retryAfter == .seconds(1))
            // The client's own backoff after a first attempt is at most 75 ms.
            #expect(ContinuousClock.now - started >= .seconds(1), "the second attempt waited for the Retry-After")

            try await harness.simulator.setFaults(APNsSimulatorFaults(serviceUnavailableRate: 1, retryAfter: "30"))
            let long = try await harness.client.send(harness.request(token: SimulatorHarness.token(2)))
            #expect(long.status == 503 && long.attempts == 1, "a 30 s wait is not held in the client")
            #expect(long.retryAfter == .seconds(30))

            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let inAnHour = formatter.string(from: Date().addingTimeInterval(3_600))
            try await harness.simulator.setFaults(APNsSimulatorFaults(tooManyRequestsRate: 1, retryAfter: inAnHour))
            let dated = try await harness.client.send(harness.request(token: SimulatorHarness.token(3)))
            let wait = try #require(dated.retryAfter)
            #expect(wait > .seconds(3_500) && wait <= .seconds(3_600), "\(inAnHour) is \(wait) away")

            try await harness.simulator.setFaults(APNsSimulatorFaults(tooManyRequestsRate: 1))
            let plain = try await harness.client.send(harness.request(token: SimulatorHarness.token(4)))
            #expect(plain.status == 429 && plain.retryAfter == nil)
            let counters = try await harness.simulator.counters()
            #expect(counters.rejections == ["TooManyRequests": 5, "ServiceUnavailable": 1])
        }
    }
}
