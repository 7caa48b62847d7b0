import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PushCore
import PushJobs
import Testing

@Suite("Worker processes sharing a campaign", .serialized)
struct WorkerProcessTests {
    typealias Stack = PipelineStack

    @Test("SIGKILL of one of two workers mid-campaign misses no token; SIGTERM stops the rest cleanly")
    func killedWorkerIsReplaced() async throws {
        let total = 20_000
        let tokens = (0..<total).map(Stack.token)
        // A realistic answer time keeps the campaign running long enough to kill a worker mid-way.
        try await Stack.with(simulator: { $0.latency = .uniform(.milliseconds(2), .milliseconds(6)) }) { stack in
            try await stack.register(tokens)
            let first = try WorkerProcess.start(stack: stack)
            let second = try WorkerProcess.start(stack: stack)
            defer {
                first.forceStop()
                second.forceStop()
            }
            try await stack.publish(Stack.job(id: "campaign", audience: .broadcast))
            let beforeKill = try await eventually("the campaign to be under way") {
                try await stack.simulator.counters().accepted
            } until: { $0 >= total / 5 }
            first.kill()
            let replacement = try WorkerProcess.start(stack: stack)
            defer { replacement.forceStop() }

            let report = try await eventually("the campaign to finish", timeout: .seconds(300)) {
                try await stack.report("campaign")
            } until: { $0.isComplete }
            let seen = try await stack.simulator.counters()
            let (missed, sentTwice) = coverage(of: tokens, seen)
            print("worker SIGKILL: killed after \(beforeKill) acceptances; \(missed.count) tokens missed, \(sentTwice) sent twice; duplicates skipped by markers \(report.duplicatesSkipped)")
            #expect(missed.isEmpty)
            #expect(report.accepted == total)
            // Sent twice: at most what the killed worker had sent and not yet settled: its
            // notifications in flight (2,000) and under one settle batch (250) per chunk in
            // flight (4). Any other copy of a chunk (the next owner's, or one the expand stage
            // published again) waits for the chunk's lease, then skips what was settled.
            #expect(sentTwice <= 4 * 1_000)

            try await second.stopGracefully()
            try await replacement.stopGracefully()
        }
    }
}

/// A `pushfleet worker` process on the stack's configuration.
///
/// Its output goes to a log file that is printed when it stops, not to the test process's
/// standard output: a worker holding that pipe would keep `swift test` waiting for it to close
/// after a crashed test process, until the CI phase's deadline.
final class WorkerProcess: Sendable {
    let process = Process()
    let log: URL

    private init(log: URL) {
        self.log = log
    }

    /// Starts a worker with every role; `environment` adds `PUSHFLEET__…` overrides.
    static func start(stack: PipelineStack, environment: [String: String] = [:]) throws -> WorkerProcess {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-worker-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        let worker = WorkerProcess(log: log)
        worker.process.executableURL = productsDirectory.appendingPathComponent("pushfleet")
        worker.process.arguments = stack.stack.workerArguments(
            logLevel: ProcessInfo.processInfo.environment["PUSHFLEET_TEST_LOG_LEVEL"] ?? "warning")
        worker.process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        worker.process.standardInput = FileHandle.nullDevice
        worker.process.standardOutput = output
        worker.process.standardError = output
        try worker.process.run()
        return worker
    }

    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        printLog()
    }

    /// SIGTERM; expects exit status 0 (within the configured shutdown deadline, else the
    /// process would have been cancelled and exited otherwise).
    func stopGracefully() async throws {
        process.terminate()
        while process.isRunning {
            try await Task.sleep(for: .milliseconds(20))
        }
        printLog()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "worker exits 0 on SIGTERM")
    }

    func forceStop() {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            printLog()
        }
    }

    /// Prints what the worker logged (at the configured level), once it has exited.
    private func printLog() {
        defer { try? FileManager.default.removeItem(at: log) }
        guard let text = try? String(contentsOf: log, encoding: .utf8), !text.isEmpty else { return }
        print("worker \(process.processIdentifier) logged:\n\(text)", terminator: text.hasSuffix("\n") ? "" : "\n")
    }

    /// Where `pushfleet` was built: `PUSHFLEET_BIN_DIR`, or next to the test binary.
    static var productsDirectory: URL {
        if let directory = ProcessInfo.processInfo.environment["PUSHFLEET_BIN_DIR"] {
            return URL(fileURLWithPath: directory)
        }
        var url = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("pushfleet").path) {
                return url
            }
        }
        return URL(fileURLWithPath: ".build/debug")
    }
}
