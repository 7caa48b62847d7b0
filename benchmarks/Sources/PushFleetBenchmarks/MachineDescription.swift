import Foundation

/// What the benchmark ran on, recorded next to every result so figures can be compared.
struct MachineDescription: Codable, Sendable {
    let cpuModel: String
    let cores: Int
    let memoryGiB: Double
    let os: String
    let swiftVersion: String
    let date: String

    static func current() -> MachineDescription {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let osRelease = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let os =
            osRelease.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { String($0.dropFirst("PRETTY_NAME=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? "unknown"
        let swift =
            (try? BenchmarkProcess.run("swift", ["--version"]).standardOutput)?
            .split(separator: "\n").first.map(String.init) ?? "unknown"
        return MachineDescription(
            cpuModel: model,
            cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryGiB: (Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824 * 10).rounded() / 10,
            os: os,
            swiftVersion: swift,
            date: ISO8601DateFormatter().string(from: Date()))
    }

    var markdown: String {
        "\(cpuModel), \(cores) cores, \(memoryGiB) GiB, \(os), \(swiftVersion), \(date)"
    }
}

/// Runs reference tools (kcat, redis-benchmark, h2load) and times them.
enum BenchmarkProcess {
    struct Output {
        let standardOutput: String
        let standardError: String
        let status: Int32
        let elapsed: Duration
    }

    /// Runs `executable` (looked up in PATH) to completion. Output goes through files, so a
    /// chatty tool never blocks on a full pipe.
    static func run(_ executable: String, _ arguments: [String], standardInput: URL? = nil) throws -> Output {
        let directory = FileManager.default.temporaryDirectory
        let stdoutURL = directory.appendingPathComponent("bench-\(UUID().uuidString).out")
        let stderrURL = directory.appendingPathComponent("bench-\(UUID().uuidString).err")
        FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: stdoutURL)
            try? FileManager.default.removeItem(at: stderrURL)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        if let standardInput { process.standardInput = try FileHandle(forReadingFrom: standardInput) }
        let started = ContinuousClock.now
        try process.run()
        process.waitUntilExit()
        let elapsed = ContinuousClock.now - started
        return Output(
            standardOutput: (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "",
            status: process.terminationStatus,
            elapsed: elapsed)
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
