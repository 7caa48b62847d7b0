import Foundation
import Spawn

/// Runs `pushfleet` to completion, its output captured in files (no pipe can fill up).
package enum CLIProcess {
    package struct Run {
        package let status: Int32
        package let standardOutput: String
        package let standardError: String
    }

    /// `environment` adds variables (`PUSHFLEET__…` overrides) to the test process's.
    package static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("out")
        let errURL = directory.appendingPathComponent("err")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let process = try ChildProcess(
            executable: WorkerProcess.productsDirectory.appendingPathComponent("pushfleet").path, arguments: arguments,
            environment: environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 },
            output: .descriptor(out.fileDescriptor), error: .descriptor(err.fileDescriptor))
        let status: Int32
        switch await process.exited() {
        case .exited(let code): status = code
        case .signalled(let signal): status = 128 + signal
        }
        try out.close()
        try err.close()
        return Run(
            status: status,
            standardOutput: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            standardError: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }
}
