import Foundation
import Spawn

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

/// Runs tools (kcat, redis-benchmark, h2load, ip, the chart scripts) to completion and times
/// them, as ``ChildProcess``es: Foundation's `Process.run()` can crash a process holding many
/// descriptors (see ``ChildProcess``), and a long benchmark holds many.
enum BenchmarkProcess {
    struct Output {
        let standardOutput: String
        let standardError: String
        let status: Int32
        let elapsed: Duration
    }

    /// Runs `executable` (a path, or a name looked up in PATH) to completion, blocking the
    /// calling thread. Output goes through files, so a chatty tool never blocks on a full pipe.
    static func run(_ executable: String, _ arguments: [String]) throws -> Output {
        let directory = FileManager.default.temporaryDirectory.path
        let standardOutput = try OutputFile(path: "\(directory)/bench-\(UUID().uuidString).out")
        let standardError = try OutputFile(path: "\(directory)/bench-\(UUID().uuidString).err")
        defer {
            standardOutput.remove()
            standardError.remove()
        }
        let started = ContinuousClock.now
        let process = try start(
            executable, arguments, output: .descriptor(standardOutput.descriptor), error: .descriptor(standardError.descriptor))
        let termination = process.waitUntilExit()
        let elapsed = ContinuousClock.now - started
        return Output(
            standardOutput: standardOutput.contents(), standardError: standardError.contents(), status: termination.status,
            elapsed: elapsed)
    }

    /// Starts `executable` (a path, or a name looked up in PATH through `/usr/bin/env`).
    static func start(_ executable: String, _ arguments: [String], output: ChildProcess.Output, error: ChildProcess.Output) throws -> ChildProcess {
        let (path, fullArguments) = executable.contains("/") ? (executable, arguments) : ("/usr/bin/env", [executable] + arguments)
        return try ChildProcess(executable: path, arguments: fullArguments, output: output, error: error)
    }
}

/// A file a child process writes to: created (or emptied) and open for writing until ``close()``.
final class OutputFile {
    let path: String
    private(set) var descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BenchmarkError.failed("cannot create \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close() }

    /// Closes this process's descriptor (the child keeps its own copy).
    func close() {
        if descriptor >= 0 {
            _ = Foundation.close(descriptor)
            descriptor = -1
        }
    }

    /// What was written so far.
    func contents() -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    func remove() {
        close()
        try? FileManager.default.removeItem(atPath: path)
    }
}

extension ChildProcess.Termination {
    /// The exit status, or the number of the signal that ended the process.
    var status: Int32 {
        switch self {
        case .exited(let status), .signalled(let status): status
        }
    }

    /// Whether a signal ended the process.
    var isSignal: Bool {
        if case .signalled = self { true } else { false }
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
