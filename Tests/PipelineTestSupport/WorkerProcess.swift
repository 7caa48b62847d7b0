import EmbeddedStack
import Foundation
import LocalRedis
import PushAPI
import PushConfiguration
import PushJobs
import Spawn
import Testing

/// A `pushfleet worker` process on the stack's configuration.
///
/// Its output goes to a log file that is printed when it stops, not to the test process's
/// standard output: a worker holding that pipe would keep `swift test` waiting for it to close
/// after a crashed test process, until the CI phase's deadline.
package final class WorkerProcess: Sendable {
    package let process: ChildProcess
    package let log: URL
    /// The port of its `/metrics`, `/healthz` and `/readyz`, when started `observable`.
    package let metricsPort: Int?

    private init(process: ChildProcess, log: URL, metricsPort: Int?) {
        self.process = process
        self.log = log
        self.metricsPort = metricsPort
    }

    /// Starts a worker with every role; `environment` adds `PUSHFLEET__…` overrides, and
    /// `observable` gives it a metrics port (``groupView()``).
    package static func start(stack: PipelineStack, environment: [String: String] = [:], observable: Bool = false) throws -> WorkerProcess {
        var environment = environment
        let metricsPort = observable ? try LocalRedisServer.freePort() : nil
        if let metricsPort { environment["PUSHFLEET__METRICS__PORT"] = String(metricsPort) }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-worker-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        let process = try ChildProcess(
            executable: productsDirectory.appendingPathComponent("pushfleet").path,
            arguments: stack.stack.workerArguments(logLevel: ProcessInfo.processInfo.environment["PUSHFLEET_TEST_LOG_LEVEL"] ?? "warning"),
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, output: .descriptor(output.fileDescriptor))
        return WorkerProcess(process: process, log: log, metricsPort: metricsPort)
    }

    /// The partitions this worker holds and whether its members are in a rebalance, per consumer
    /// group (`pushfleet_kafka_assigned_partitions`, `pushfleet_kafka_group_rebalancing` on its
    /// `/metrics`); empty until its endpoint answers. Needs `observable`.
    package func groupView() async throws -> WorkerGroupView {
        let port = try #require(metricsPort, "the worker was not started observable")
        let endpoint = PushAPIClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, apiKey: nil)
        guard let response = try? await endpoint.request("GET", "/metrics"), response.status == 200 else {
            return WorkerGroupView(assigned: [:], rebalancing: [:])
        }
        return WorkerMetricsText.groupView(response.body)
    }

    package func kill() {
        process.signal(SIGKILL)
        process.waitUntilExit()
        printLog()
    }

    /// SIGTERM; expects exit status 0 (within the configured shutdown deadline, else the
    /// process would have been cancelled and exited otherwise).
    package func stopGracefully() async throws {
        process.terminate()
        let ended = await process.exited()
        printLog()
        #expect(ended == .exited(0), "worker exits 0 on SIGTERM, ended \(ended)")
    }

    /// SIGTERM, then waits for the process to end however it does; returns how and when, and
    /// prints its log.
    package func stop() async throws -> (ended: ChildProcess.Termination, after: Duration) {
        let start = ContinuousClock.now
        process.terminate()
        let ended = await process.exited()
        let after = ContinuousClock.now - start
        printLog()
        return (ended, after)
    }

    package func forceStop() {
        if process.isRunning {
            process.signal(SIGKILL)
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
    package static var productsDirectory: URL {
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

extension WorkerProcess {
    /// Waits until `workers` (started `observable`) hold their three consumer groups settled
    /// (``SettledGroupsWatch``): every partition held, by each of them where there are enough
    /// to go round, and none of their members in a rebalance, so no rebalance moves work between
    /// them once a campaign starts and none is under way when one of them stops. After a worker
    /// was killed, `notBefore` is when its groups have all noticed (``SettledGroupsWatch``).
    package static func awaitGroups(
        _ workers: [WorkerProcess], stack: PipelineStack, notBefore: ContinuousClock.Instant? = nil
    ) async throws {
        let options = stack.stack.options
        var watch = SettledGroupsWatch(
            groups: WorkerGroups(
                prefix: stack.configuration.kafka.groupPrefix, jobPartitions: Int(options.jobPartitions),
                deliveryPartitions: Int(options.deliveryPartitions), feedbackPartitions: EmbeddedStack.feedbackPartitions),
            notBefore: notBefore)
        _ = try await eventually("\(workers.count) worker(s) to hold every partition, out of any rebalance") {
            var views: [WorkerGroupView] = []
            for worker in workers {
                views.append(try await worker.groupView())
            }
            return (views, ContinuousClock.now)
        } until: {
            watch.observe($0.0, at: $0.1)
        }
    }
}
