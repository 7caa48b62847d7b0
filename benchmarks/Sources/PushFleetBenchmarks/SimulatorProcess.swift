import Foundation
import Spawn

/// `apns-sim` running as a child process, so that every client measured (this process, h2load,
/// aioapns) talks to the same server and this process's CPU time is the client's alone.
final class SimulatorProcess {
    let process: ChildProcess
    let port: Int

    private init(process: ChildProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// Starts the simulator and waits until it listens.
    static func start(
        binary: String, directory: URL, keyID: String, teamID: String, keyPath: String, bundleID: String
    ) async throws -> SimulatorProcess {
        let portsFile = directory.appendingPathComponent("ports.json")
        // Its standard error stays this process's.
        let process = try ChildProcess(
            executable: binary,
            arguments: [
                "--port", "0", "--ports-out", portsFile.path,
                "--ca-out", directory.appendingPathComponent("ca.pem").path,
                "--key", "\(keyID):\(teamID):\(keyPath)", "--bundle-id", bundleID, "--no-duplicate-tracking",
            ],
            output: .null, error: .descriptor(STDERR_FILENO))
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: portsFile.path) {
            guard ContinuousClock.now < deadline, process.isRunning else { throw BenchmarkError.failed("apns-sim did not start") }
            try await Task.sleep(for: .milliseconds(50))
        }
        let ports = try JSONDecoder().decode([String: Int?].self, from: Data(contentsOf: portsFile))
        return SimulatorProcess(process: process, port: (ports["port"] ?? nil) ?? 0)
    }

    /// CPU seconds the simulator has used so far.
    var cpuSeconds: Double { ResourceUsage.cpuSeconds(ofProcess: process.processIdentifier) }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
