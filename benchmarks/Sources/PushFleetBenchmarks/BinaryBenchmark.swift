import APNs
import APNsCore
import APNsSimulator
import ArgumentParser
import FlowControl
import Foundation
import NIOCore
import Synchronization

/// The legacy binary interface against HTTP/2, on the same simulator (in this process, with its
/// binary gateway on) and the same client, with the same certificate and batches of 1,000
/// devices, `concurrency` batches at a time: what an app pays for `transport: binary`.
struct BinaryBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "binary", abstract: "The binary interface's throughput against HTTP/2 on the same simulator.")

    @Option(help: "Notifications per run.")
    var count = 100_000
    @Option(help: "Batches of 1,000 devices in flight at once (the send stage's chunks in flight).")
    var concurrency = 8
    @Option(help: "The binary gateway's quiet period in ms (apns.binary-quiet-period-ms).")
    var quietPeriodMs = 500
    @Option(help: "Rounds; medians are reported.")
    var rounds = 3
    @OptionGroup var results: ResultOptions

    struct Measurement: Codable, Sendable {
        var transport: String
        var round: Int
        var notifications: Int
        var accepted: Int
        var seconds: Double
        var notificationsPerSecond: Double
        var cpuSecondsPer100k: Double
    }

    struct Report: Codable, Sendable {
        var machine: MachineDescription
        var count: Int
        var concurrency: Int
        var quietPeriodMilliseconds: Int
        var measurements: [Measurement]
    }

    func run() async throws {
        let bundleID = "com.example.bench"
        var simulatorConfiguration = APNsSimulatorConfiguration(threads: 1, bundleIDs: [bundleID], tracksDuplicates: false)
        simulatorConfiguration.binaryPort = 0
        let simulator = try APNsSimulator(configuration: simulatorConfiguration)
        try await simulator.start()
        var configuration = APNsClientConfiguration(
            endpointOverride: .init(host: "127.0.0.1", port: simulator.port),
            trustRoots: .pem(simulator.tlsIdentity.certificateAuthorityPEM), connectionsPerPool: 2)
        configuration.binaryGatewayEndpoints[.sandbox] = .init(host: "127.0.0.1", port: simulator.binaryPort ?? 0)
        configuration.binaryQuietPeriod = .milliseconds(quietPeriodMs)
        let client = try APNsClient(configuration: configuration)
        let issued = try simulator.tlsIdentity.issueClientCertificate(topic: bundleID, environmentName: "sandbox")
        let payload = #"{"aps":{"alert":{"title":"Benchmark","body":""# + String(repeating: "x", count: 123) + #""},"badge":1}}"#
        let notification = APNsRequest(
            credential: .certificate(name: "bench", certificateChainPEM: issued.certificatePEM, privateKeyPEM: issued.privateKeyPEM),
            environment: .sandbox, deviceToken: try DeviceToken(hex: String(repeating: "ab", count: 32)), bundleID: bundleID,
            payload: ByteBuffer(string: payload))
        let tokens = (0..<1_000).map { n in try! DeviceToken(hex: String(repeating: "a", count: 48) + String(format: "%016x", n)) }

        var measurements: [Measurement] = []
        for round in 1...max(1, rounds) {
            for binary in [false, true] {
                _ = await send(client, notification, tokens, count: 4_000, binary: binary)
                let cpuBefore = ResourceUsage.selfCPUSeconds()
                let start = ContinuousClock.now
                let accepted = await send(client, notification, tokens, count: count, binary: binary)
                let elapsed = ContinuousClock.now - start
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                let cpu = ResourceUsage.selfCPUSeconds() - cpuBefore
                let measurement = Measurement(
                    transport: binary ? "binary" : "http2", round: round, notifications: count, accepted: accepted, seconds: seconds,
                    notificationsPerSecond: Double(count) / seconds, cpuSecondsPer100k: cpu / Double(count) * 100_000)
                FileHandle.standardError.write(
                    Data(
                        "round \(round): \(measurement.transport) \(Int(measurement.notificationsPerSecond)) notifications/s, \(accepted)/\(count) accepted\n"
                            .utf8))
                measurements.append(measurement)
            }
        }
        await client.shutdown()
        try await simulator.shutdown()

        let report = Report(
            machine: .current(), count: count, concurrency: concurrency, quietPeriodMilliseconds: quietPeriodMs, measurements: measurements)
        let directory = URL(fileURLWithPath: results.results)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: directory.appendingPathComponent("binary.json"))
        try Data(Self.markdown(report).utf8).write(to: directory.appendingPathComponent("binary.md"))
    }

    /// Sends `count` notifications in batches of 1,000, `concurrency` at a time; answers how many were accepted.
    private func send(_ client: APNsClient, _ notification: APNsRequest, _ tokens: [DeviceToken], count: Int, binary: Bool) async -> Int {
        let accepted = AcceptedCount()
        let batches = AsyncPermits(concurrency)
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            while next < count {
                let size = min(tokens.count, count - next)
                next += size
                guard (try? await batches.acquire(1)) != nil else { break }  // cancelled
                let batch = Array(tokens.prefix(size))
                group.addTask {
                    let onResult: @Sendable (Int, Result<APNsResponse, APNsError>) -> Void = { _, result in
                        if (try? result.get())?.isSuccess == true { accepted.count.withLock { $0 += 1 } }
                    }
                    if binary {
                        await client.sendOverBinaryInterface(notification, to: batch, onResult: onResult)
                    } else {
                        await client.send(notification, to: batch, onResult: onResult)
                    }
                    batches.release(1)
                }
            }
        }
        return accepted.count.withLock { $0 }
    }

    private final class AcceptedCount: Sendable {
        let count = Mutex(0)
    }

    static func markdown(_ report: Report) -> String {
        func median(_ transport: String, _ value: (Measurement) -> Double) -> Double {
            let values = report.measurements.filter { $0.transport == transport }.map(value).sorted()
            return values.isEmpty ? 0 : values[values.count / 2]
        }
        let http2 = median("http2") { $0.notificationsPerSecond }
        let binary = median("binary") { $0.notificationsPerSecond }
        var lines = [
            "# The binary interface against HTTP/2",
            "",
            "`pushfleet-bench binary`: \(report.count) notifications per run, batches of 1,000 devices, \(report.concurrency) batches at a time, one client and one simulator (in the benchmark's process, one event loop) for both transports, the same certificate. The binary gateway's quiet period: \(report.quietPeriodMilliseconds) ms. Medians of \(Set(report.measurements.map(\.round)).count) rounds.",
            "",
            "Machine: \(report.machine.cpuModel), \(report.machine.cores) cores, \(String(format: "%.0f", report.machine.memoryGiB)) GiB, \(report.machine.os), \(report.machine.date).",
            "",
            "| transport | notifications/s | CPU s per 100,000 (client and simulator) |",
            "|---|---|---|",
            "| HTTP/2 | \(Int(http2)) | \(String(format: "%.2f", median("http2") { $0.cpuSecondsPer100k })) |",
            "| binary | \(Int(binary)) | \(String(format: "%.2f", median("binary") { $0.cpuSecondsPer100k })) |",
            "",
            "Binary / HTTP/2: \(String(format: "%.2f", http2 > 0 ? binary / http2 : 0)).",
            "",
            "Each binary slice waits out the quiet period before its frames count as taken (nothing in the protocol says a frame was taken), so a batch of 1,000 costs at least that long: the binary interface's rate is about 1,000 × batches in flight / quiet period, whatever the machine.",
            "",
            "| round | transport | notifications/s | accepted |",
            "|---|---|---|---|",
        ]
        for m in report.measurements {
            lines.append("| \(m.round) | \(m.transport) | \(Int(m.notificationsPerSecond)) | \(m.accepted)/\(m.notifications) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
