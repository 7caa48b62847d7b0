import APNs
import ArgumentParser
import Crypto
import Dispatch
import Foundation
import NIOCore
import Spawn

/// Client → simulator throughput at 1, 2, 4 and 8 connections, with h2load and aioapns as
/// references against the same `apns-sim` process; writes Markdown and JSON results.
struct APNsBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns", abstract: "APNs client throughput against the simulator, with h2load and aioapns.")

    @Option(help: "Notifications per APNsClient and h2load run.")
    var count = 200_000
    @Option(help: "Notifications per aioapns run (it is far slower).")
    var aioapnsCount = 20_000
    @Option(help: "Connection counts, comma separated.")
    var connections = "1,2,4,8"
    @Option(help: "Streams in flight per connection (h2load -m).")
    var streamsPerConnection = 100
    @Option(help: "The apns-sim binary (build it in release mode).")
    var simulator = ".build/release/apns-sim"
    @Option(help: "The h2load binary.")
    var h2load = "h2load"
    @Option(help: "The Python interpreter with aioapns installed.")
    var python = "python3"
    @Option(help: "The aioapns benchmark script.")
    var aioapnsScript = "benchmarks/aioapns_bench.py"
    @Option(help: "Rounds; each runs every client at every connection count. Medians are reported.")
    var rounds = 3
    @Option(help: "Where to write apns.md and apns.json.")
    var output = "benchmarks/results"

    func run() async throws {
        let connectionCounts = connections.split(separator: ",").compactMap { Int($0) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apns-benchmark-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let (teamID, keyID, bundleID) = ("TEAMBENCH1", "KEYBENCH01", "com.example.bench")
        let key = P256.Signing.PrivateKey()
        let keyPath = directory.appendingPathComponent("key.p8").path
        try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: keyPath))
        let payloadText =
            #"{"aps":{"alert":{"title":"Benchmark","body":""#
            + String(repeating: "x", count: 123) + #""},"badge":1,"sound":"default"}}"#
        let payloadFile = directory.appendingPathComponent("payload.json")
        try Data(payloadText.utf8).write(to: payloadFile)

        let simulatorProcess = try await SimulatorProcess.start(
            binary: simulator, directory: directory, keyID: keyID, teamID: teamID, keyPath: keyPath,
            bundleID: bundleID)
        defer { simulatorProcess.stop() }
        let certificateAuthorityPEM = try String(
            contentsOf: directory.appendingPathComponent("ca.pem"), encoding: .utf8)
        let token = try APNsProviderToken(teamID: teamID, keyID: keyID, privateKey: key, issuedAt: Date())

        let client = ClientBenchmark(
            port: simulatorProcess.port, certificateAuthorityPEM: certificateAuthorityPEM,
            credential: .token(teamID: teamID, keyID: keyID, privateKeyPEM: key.pemRepresentation),
            bundleID: bundleID, payload: ByteBuffer(string: payloadText))
        let references = ReferenceClients(
            port: simulatorProcess.port, directory: directory, authorization: token.value, topic: bundleID,
            deviceToken: String(repeating: "ab", count: 32), payloadFile: payloadFile,
            simulatorPID: simulatorProcess.process.processIdentifier)

        var measurements: [APNsBenchmarkReport.Measurement] = []
        let rounds = max(1, self.rounds)
        for round in 1...rounds {
            for connectionCount in connectionCounts {
                var ours = try await client.run(
                    connections: connectionCount, streamsPerConnection: streamsPerConnection, count: count,
                    simulator: simulatorProcess)
                var batches = try await client.run(
                    connections: connectionCount, streamsPerConnection: streamsPerConnection, count: count,
                    simulator: simulatorProcess, mode: .batch)
                var limit = try await offCooperativePool {
                    try references.h2load(
                        binary: h2load, connections: connectionCount, streamsPerConnection: streamsPerConnection,
                        count: count)
                }
                var peer = try await offCooperativePool {
                    try references.aioapns(
                        python: python, script: aioapnsScript, keyPath: keyPath, keyID: keyID, teamID: teamID,
                        payload: payloadText, connections: connectionCount,
                        streamsPerConnection: streamsPerConnection, count: aioapnsCount)
                }
                ours.round = round
                batches.round = round
                limit.round = round
                peer.round = round
                for measurement in [ours, batches, limit, peer] {
                    FileHandle.standardError.write(Data("round \(round): \(Self.line(measurement))\n".utf8))
                }
                measurements += [ours, batches, limit, peer]
            }
        }

        let report = APNsBenchmarkReport(
            machine: .current(), payloadBytes: payloadText.utf8.count, streamsPerConnection: streamsPerConnection,
            rounds: rounds, measurements: measurements)
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: output).appendingPathComponent("apns.json"))
        try Data(Self.markdown(report).utf8).write(to: URL(fileURLWithPath: output).appendingPathComponent("apns.md"))
    }

    /// Runs blocking work (waiting for a child process) on a Dispatch thread.
    private func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }

    private static func line(_ m: APNsBenchmarkReport.Measurement) -> String {
        "\(m.client) c=\(m.connections): \(Int(m.notificationsPerSecond)) notifications/s, \(m.succeeded)/\(m.notifications) ok"
    }

    static func markdown(_ report: APNsBenchmarkReport) -> String {
        func format(_ value: Double?, _ digits: Int = 2) -> String {
            value.map { String(format: "%.\(digits)f", $0) } ?? "–"
        }
        let machine = report.machine
        var text = """
            # APNs client benchmark

            Client → `apns-sim` (separate process, release build) over HTTP/2 + TLS on loopback, token
            authentication, \(report.payloadBytes)-byte payload, \(report.streamsPerConnection) streams in flight per
            connection. `APNsClient` sends one notification per `send(_:)` call; `APNsClient batch`
            sends 250 devices per `send(_:to:onResult:)` call, as the send stage does. References
            against the same simulator: `h2load` (this machine's HTTP/2 limit) and `aioapns` (the peer
            client). CPU is user + system seconds per 100 000 notifications (getrusage for the client,
            /proc for the simulator). Client and simulator share the cores.

            | machine | |
            |---|---|
            | processors (nproc) | \(machine.cores) |
            | CPU | \(machine.cpuModel) |
            | memory | \(machine.memoryGiB) GiB |
            | OS | \(machine.os) |
            | Swift | \(machine.swiftVersion) |
            | date | \(machine.date) |

            Each of \(report.rounds) rounds runs every client at every connection count, back to back; the
            table shows each client's median round by rate, and each ratio is the median of the
            per-round ratios (the two sides of a ratio ran under the same machine load).

            | connections | client | notifications/s | ok | client CPU s/100k | simulator CPU s/100k | p50 ms | p99 ms |
            |---:|---|---:|---:|---:|---:|---:|---:|

            """
        let connectionCounts = Set(report.measurements.map(\.connections)).sorted()
        for connections in connectionCounts {
            for client in ["APNsClient", "APNsClient batch", "h2load", "aioapns"] {
                guard let m = report.median(of: client, connections: connections) else { continue }
                text += "| \(m.connections) | \(m.client) | \(Int(m.notificationsPerSecond)) | \(m.succeeded)/\(m.notifications) "
                text += "| \(format(m.clientCPUSecondsPer100k)) | \(format(m.simulatorCPUSecondsPer100k)) "
                text += "| \(format(m.latencyP50Milliseconds)) | \(format(m.latencyP99Milliseconds)) |\n"
            }
        }
        text +=
            "\n| connections | APNsClient / h2load | APNsClient batch / h2load | APNsClient / aioapns | rounds (APNsClient / batch / h2load / aioapns notifications/s) |\n"
        text += "|---:|---:|---:|---:|---|\n"
        for connections in connectionCounts {
            let vsLimit = report.ratio("APNsClient", to: "h2load", connections: connections).map { format($0 * 100, 0) + " %" } ?? "–"
            let batchVsLimit = report.ratio("APNsClient batch", to: "h2load", connections: connections).map { format($0 * 100, 0) + " %" } ?? "–"
            let vsPeer = report.ratio("APNsClient", to: "aioapns", connections: connections).map { format($0, 1) + " ×" } ?? "–"
            let rounds = (1...report.rounds).map { round in
                ["APNsClient", "APNsClient batch", "h2load", "aioapns"].map { client in
                    report.measurements(of: client, connections: connections).first { $0.round == round }
                        .map { String(Int($0.notificationsPerSecond)) } ?? "–"
                }.joined(separator: " / ")
            }.joined(separator: "; ")
            text += "| \(connections) | \(vsLimit) | \(batchVsLimit) | \(vsPeer) | \(rounds) |\n"
        }
        return text
    }
}
