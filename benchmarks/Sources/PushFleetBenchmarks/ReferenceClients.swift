import Foundation

/// The references measured against the same simulator: h2load (this machine's HTTP/2 limit)
/// and aioapns (the peer client).
struct ReferenceClients {
    var port: Int
    var directory: URL
    var authorization: String
    var topic: String
    var deviceToken: String
    var payloadFile: URL
    /// The simulator's process id, to read its CPU time.
    var simulatorPID: Int32

    /// `h2load -n count -c connections -m streams` with the APNs headers and payload.
    func h2load(
        binary: String, connections: Int, streamsPerConnection: Int, count: Int
    ) throws -> APNsBenchmarkReport.Measurement {
        let arguments = [
            "-n", String(count), "-c", String(connections), "-m", String(streamsPerConnection),
            "-H", "authorization: bearer \(authorization)", "-H", "apns-topic: \(topic)",
            "-H", "apns-push-type: alert", "-d", payloadFile.path,
            "https://127.0.0.1:\(port)/3/device/\(deviceToken)",
        ]
        let (output, cpu, simulatorCPU) = try run(binary, arguments)
        // "finished in 1.23s, 81234.56 req/s, ..." (or "935.14ms, ..." for a run under a second)
        // and "status codes: 200000 2xx, ..."
        guard let finished = output.split(separator: "\n").first(where: { $0.hasPrefix("finished in") }),
            let durationText = finished.split(separator: " ").dropFirst(2).first,
            let printedSeconds = Self.seconds(inH2loadDuration: durationText.dropLast(durationText.hasSuffix(",") ? 1 : 0))
        else { throw BenchmarkError.failed("unexpected h2load output: \(output)") }
        // The duration is printed to 10 ms; the rate beside it comes from the exact duration.
        let seconds = Self.requestsPerSecond(inH2loadFinishedLine: finished).map { Double(count) / $0 } ?? printedSeconds
        let statusLine = output.split(separator: "\n").first { $0.hasPrefix("status codes:") }
        let succeeded = statusLine.flatMap { Int($0.split(separator: " ")[2]) } ?? 0
        return APNsBenchmarkReport.Measurement(
            client: "h2load", connections: connections, notifications: count, succeeded: succeeded, seconds: seconds,
            notificationsPerSecond: Double(count) / seconds, clientCPUSecondsPer100k: cpu / Double(count) * 100_000,
            simulatorCPUSecondsPer100k: simulatorCPU / Double(count) * 100_000, latencyP50Milliseconds: nil,
            latencyP99Milliseconds: nil)
    }

    /// `h2load -D seconds -c connections -m streams`: as many requests as fit in `duration`
    /// (after a warm-up of one second that opens the connections), for a rate at any distance.
    func h2load(
        binary: String, connections: Int, streamsPerConnection: Int, duration: Int
    ) throws -> APNsBenchmarkReport.Measurement {
        let arguments = [
            "-D", String(duration), "--warm-up-time", "1", "-c", String(connections), "-m", String(streamsPerConnection),
            "-H", "authorization: bearer \(authorization)", "-H", "apns-topic: \(topic)",
            "-H", "apns-push-type: alert", "-d", payloadFile.path,
            "https://127.0.0.1:\(port)/3/device/\(deviceToken)",
        ]
        let (output, cpu, simulatorCPU) = try run(binary, arguments)
        // "finished in 5.00s, 12345.67 req/s, …" and "requests: 61728 total, 61828 started, 61728 done, 61728 succeeded, …"
        guard let finished = output.split(separator: "\n").first(where: { $0.hasPrefix("finished in") }),
            let rate = Self.requestsPerSecond(inH2loadFinishedLine: finished),
            let requests = output.split(separator: "\n").first(where: { $0.hasPrefix("requests:") }),
            let done = Self.count(named: "done", inH2loadRequestsLine: requests),
            let succeeded = Self.count(named: "succeeded", inH2loadRequestsLine: requests), done > 0
        else { throw BenchmarkError.failed("unexpected h2load output: \(output)") }
        let seconds = Double(done) / rate
        return APNsBenchmarkReport.Measurement(
            client: "h2load", connections: connections, notifications: done, succeeded: succeeded, seconds: seconds,
            notificationsPerSecond: rate, clientCPUSecondsPer100k: cpu / Double(done) * 100_000,
            simulatorCPUSecondsPer100k: simulatorCPU / Double(done) * 100_000, latencyP50Milliseconds: nil,
            latencyP99Milliseconds: nil)
    }

    /// A count in h2load's `requests: 61728 total, 61828 started, 61728 done, …` line.
    static func count(named name: String, inH2loadRequestsLine line: Substring) -> Int? {
        let words = line.replacingOccurrences(of: ",", with: "").split(separator: " ")
        guard let index = words.firstIndex(where: { $0 == name }), index > words.startIndex else { return nil }
        return Int(words[index - 1])
    }

    /// h2load prints a duration with the unit that suits it: `1.23s`, `935.14ms`, `870us`.
    static func seconds(inH2loadDuration text: Substring) -> Double? {
        for (unit, scale) in [("us", 1e-6), ("ms", 1e-3), ("s", 1.0)] where text.hasSuffix(unit) {
            return Double(text.dropLast(unit.count)).map { $0 * scale }
        }
        return nil
    }

    /// The rate in h2load's `finished in 3.11s, 64305.12 req/s, …` line.
    static func requestsPerSecond(inH2loadFinishedLine line: Substring) -> Double? {
        let words = line.split(separator: " ")
        guard let unit = words.firstIndex(where: { $0.hasPrefix("req/s") }), unit > words.startIndex else { return nil }
        return Double(words[unit - 1]).flatMap { $0 > 0 ? $0 : nil }
    }

    /// The aioapns script (benchmarks/aioapns_bench.py).
    func aioapns(
        python: String, script: String, keyPath: String, keyID: String, teamID: String, payload: String,
        connections: Int, streamsPerConnection: Int, count: Int
    ) throws -> APNsBenchmarkReport.Measurement {
        let arguments = [
            script, "--host", "localhost", "--port", String(port),
            "--ca", directory.appendingPathComponent("ca.pem").path, "--key", keyPath, "--key-id", keyID,
            "--team-id", teamID, "--topic", topic, "--token", deviceToken, "--payload", payload,
            "--count", String(count), "--concurrency", String(connections * streamsPerConnection),
            "--connections", String(connections),
        ]
        let (output, _, simulatorCPU) = try run(python, arguments)
        guard let line = output.split(separator: "\n").last,
            let result = try? JSONDecoder().decode(Result.self, from: Data(line.utf8))
        else { throw BenchmarkError.failed("unexpected aioapns output: \(output)") }
        return APNsBenchmarkReport.Measurement(
            client: "aioapns", connections: connections, notifications: count, succeeded: result.ok,
            seconds: result.seconds, notificationsPerSecond: result.rate,
            clientCPUSecondsPer100k: result.cpuSeconds / Double(count) * 100_000,
            simulatorCPUSecondsPer100k: simulatorCPU / Double(count) * 100_000, latencyP50Milliseconds: nil,
            latencyP99Milliseconds: nil)
    }

    private struct Result: Decodable {
        var ok: Int
        var seconds: Double
        var rate: Double
        var cpuSeconds: Double

        enum CodingKeys: String, CodingKey {
            case ok, seconds, rate
            case cpuSeconds = "cpu_seconds"
        }
    }

    /// Runs a tool to completion (blocking: call it off the cooperative pool); returns its
    /// standard output (its errors go into the failure), its CPU seconds and the simulator's.
    private func run(
        _ tool: String, _ arguments: [String]
    ) throws -> (String, Double, Double) {
        let childrenBefore = ResourceUsage.childrenCPUSeconds()
        let simulatorBefore = ResourceUsage.cpuSeconds(ofProcess: simulatorPID)
        let run = try BenchmarkProcess.run(tool, arguments)
        guard run.status == 0 else { throw BenchmarkError.failed("\(tool) failed: \(run.standardOutput)\(run.standardError)") }
        let output = run.standardOutput
        let simulatorCPU = ResourceUsage.cpuSeconds(ofProcess: simulatorPID) - simulatorBefore
        return (output, ResourceUsage.childrenCPUSeconds() - childrenBefore, simulatorCPU)
    }
}
