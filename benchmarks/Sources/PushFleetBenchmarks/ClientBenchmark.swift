import APNs
import APNsCore
import FlowControl
import Foundation
import Histogram
import NIOCore
import Synchronization

/// Measures ``APNsClient`` against the simulator.
struct ClientBenchmark {
    var port: Int
    var certificateAuthorityPEM: String
    var credential: APNsCredential
    var bundleID: String
    var payload: ByteBuffer

    /// How notifications are handed to the client.
    enum Mode: String {
        /// One `send(_:)` call per notification.
        case single = "APNsClient"
        /// `send(_:to:onResult:)` with 250 devices a call, as the send stage does.
        case batch = "APNsClient batch"
    }

    /// Sends `count` notifications over `connections` connections, `streamsPerConnection` in
    /// flight per connection, after a warm-up.
    func run(
        connections: Int, streamsPerConnection: Int, count: Int, simulator: SimulatorProcess, mode: Mode = .single
    ) async throws -> APNsBenchmarkReport.Measurement {
        let configuration = APNsClientConfiguration(
            endpointOverride: .init(host: "127.0.0.1", port: port),
            trustRoots: .pem(certificateAuthorityPEM),
            connectionsPerPool: connections,
            connectionSpacing: .milliseconds(1))
        let client = try APNsClient(configuration: configuration)
        let window = connections * streamsPerConnection
        let requests = (0..<1024).map { n in
            APNsRequest(
                credential: credential, environment: .sandbox,
                deviceToken: try! DeviceToken(hex: String(repeating: "a", count: 48) + String(format: "%016x", n)),
                bundleID: bundleID, payload: payload)
        }
        func measure(_ count: Int) async throws -> (Int, Histogram<UInt64>) {
            switch mode {
            case .single: try await send(client: client, requests: requests, count: count, window: window)
            case .batch: await sendBatches(client: client, requests: requests, count: count, window: window)
            }
        }
        _ = try await measure(window * 4)

        let cpuBefore = ResourceUsage.selfCPUSeconds()
        let simulatorBefore = simulator.cpuSeconds
        let start = ContinuousClock.now
        let (succeeded, histogram) = try await measure(count)
        let elapsed = ContinuousClock.now - start
        let cpu = ResourceUsage.selfCPUSeconds() - cpuBefore
        let simulatorCPU = simulator.cpuSeconds - simulatorBefore
        await client.shutdown()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return APNsBenchmarkReport.Measurement(
            client: mode.rawValue, connections: connections, notifications: count, succeeded: succeeded,
            seconds: seconds, notificationsPerSecond: Double(count) / seconds,
            clientCPUSecondsPer100k: cpu / Double(count) * 100_000,
            simulatorCPUSecondsPer100k: simulatorCPU / Double(count) * 100_000,
            latencyP50Milliseconds: Double(histogram.valueAtPercentile(50)) / 1000,
            latencyP99Milliseconds: Double(histogram.valueAtPercentile(99)) / 1000)
    }

    /// Sends batches of 250 devices, at most `window` notifications in flight; returns the
    /// successes and a latency histogram in µs (from the batch's start to each answer).
    private func sendBatches(
        client: APNsClient, requests: [APNsRequest], count: Int, window: Int
    ) async -> (Int, Histogram<UInt64>) {
        let batchSize = min(250, window)
        let inFlight = AsyncPermits(window)
        let tally = Tally()
        let tokens = requests.map(\.deviceToken)
        let notification = requests[0]
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            while next < count {
                let size = min(batchSize, count - next)
                guard (try? await inFlight.acquire(size)) != nil else { break }  // cancelled
                let batch = (next..<(next + size)).map { tokens[$0 % tokens.count] }
                next += size
                group.addTask {
                    let start = ContinuousClock.now
                    await client.send(notification, to: batch) { _, result in
                        let elapsed = ContinuousClock.now - start
                        let micros = UInt64(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000)
                        let ok = (try? result.get())?.isSuccess ?? false
                        tally.record(ok: ok, micros: micros)
                        inFlight.release()
                    }
                }
            }
        }
        return tally.result
    }

    /// What the callbacks of the batches counted.
    private final class Tally: Sendable {
        private let state = Mutex(
            (succeeded: 0, histogram: Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)))

        func record(ok: Bool, micros: UInt64) {
            state.withLock {
                if ok { $0.succeeded += 1 }
                $0.histogram.record(micros)
            }
        }

        var result: (Int, Histogram<UInt64>) { state.withLock { ($0.succeeded, $0.histogram) } }
    }

    /// Sends with a sliding window; returns the successes and a latency histogram in µs.
    private func send(
        client: APNsClient, requests: [APNsRequest], count: Int, window: Int
    ) async throws -> (Int, Histogram<UInt64>) {
        try await withThrowingTaskGroup(of: (Bool, UInt64).self) { group in
            var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
            var succeeded = 0
            var next = 0
            func addTask() {
                let request = requests[next % requests.count]
                next += 1
                group.addTask {
                    let start = ContinuousClock.now
                    let ok = (try? await client.send(request))?.isSuccess ?? false
                    let elapsed = ContinuousClock.now - start
                    return (ok, UInt64(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000))
                }
            }
            while next < min(window, count) { addTask() }
            while let (ok, micros) = try await group.next() {
                if ok { succeeded += 1 }
                histogram.record(micros)
                if next < count { addTask() }
            }
            return (succeeded, histogram)
        }
    }
}
