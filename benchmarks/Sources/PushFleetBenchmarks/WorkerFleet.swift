import EmbeddedStack
import Foundation
import LocalRedis
import PushJobs
import Spawn
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `pushfleet worker` processes on an embedded stack, started, killed and stopped by the
/// benchmarks; remembers how each one ended and the highest peak RSS seen. Safe to use from the
/// task injecting faults and the one sampling at once.
final class WorkerFleet: Sendable {
    /// Where a worker runs: the command that puts it on its host, and the address its `/metrics`
    /// is reached at.
    struct Placement: Sendable {
        var launcher: [String]
        var address: String

        /// A process of this machine, on loopback.
        static let local = Placement(launcher: [], address: "127.0.0.1")
    }

    /// How a worker process ended.
    struct Ended: Codable, Equatable {
        /// `exit` (with its status) or `signal` (with the signal's number).
        var reason: String
        var status: Int32
        /// What the end means (``Kind``).
        var kind: Kind
        /// From SIGTERM to the exit, for a worker the benchmark stopped.
        var stopSeconds: Double?

        enum Kind: String, Codable {
            /// Exit 0 after SIGTERM: everything finished within the shutdown deadline.
            case stopped
            /// Exit 75 after SIGTERM: the shutdown deadline passed and the work in progress was
            /// cancelled and left for the next owner (`ProcessStop`). Safe by design; reported
            /// apart, not a failure.
            case stoppedAtDeadline = "stopped-at-deadline"
            /// The SIGKILL of the fault being measured.
            case killed
            /// Any other signal: a crash.
            case crashed
            /// Any other exit status: the worker failed.
            case failed
        }

        /// Whether the end is one a fault suite accepts.
        var expected: Bool { kind != .crashed && kind != .failed }

        /// The end of a process that exited (`signal == false`) or was killed by a signal with
        /// `status`; `expectedSignal` is the SIGKILL the benchmark sent, if it sent one.
        init(signal: Bool, status: Int32, expectedSignal: Int32?, stopSeconds: Double? = nil) {
            self.reason = signal ? "signal" : "exit"
            self.status = status
            self.stopSeconds = stopSeconds
            switch (signal, status) {
            case (false, 0): kind = .stopped
            case (false, 75): kind = .stoppedAtDeadline
            case (false, _): kind = .failed
            case (true, expectedSignal): kind = .killed
            case (true, _): kind = .crashed
            }
        }

        /// As the reports show it: `exit 0`, `exit 75 (deadline)`, `signal 9`.
        var label: String {
            kind == .stoppedAtDeadline ? "\(reason) \(status) (deadline)" : "\(reason) \(status)"
        }
    }

    private struct State {
        var running: [ChildProcess] = []
        /// SIGTERMed by ``beginStop(_:)`` and not yet seen to exit.
        var leaving: [ChildProcess] = []
        var ended: [Ended] = []
        var started = 0
        var peakKilobytes: [Int32: Int] = [:]
        /// Each worker's `/metrics` address, by process id.
        var metricsURLs: [Int32: URL] = [:]
    }

    let binary: String
    let arguments: [String]
    let environment: [String: String]
    /// Worker `n` (counting every start) runs at `placements[n % placements.count]`.
    let placements: [Placement]
    private let state = Mutex(State())

    convenience init(binary: String, stack: EmbeddedStack, logLevel: String, environment: [String: String] = [:]) {
        self.init(binary: binary, arguments: stack.workerArguments(logLevel: logLevel), environment: environment)
    }

    init(binary: String, arguments: [String], environment: [String: String] = [:], placements: [Placement] = [.local]) {
        precondition(!placements.isEmpty, "at least one placement")
        self.binary = binary
        self.arguments = arguments
        self.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        self.placements = placements
    }

    deinit {
        state.withLock { state in
            for process in state.running { process.signal(SIGKILL) }
        }
    }

    var runningCount: Int { state.withLock { $0.running.count } }
    /// The process ids of the running workers.
    var runningIdentifiers: [Int32] { state.withLock { $0.running.map(\.processIdentifier) } }
    var started: Int { state.withLock { $0.started } }
    var ended: [Ended] { state.withLock { $0.ended } }
    /// The highest peak RSS of any worker, in MB.
    var peakMegabytes: Double { state.withLock { Double($0.peakKilobytes.values.max() ?? 0) / 1024 } }

    /// Starts `count` more workers.
    func start(_ count: Int = 1) throws {
        for _ in 0..<count {
            let placement = placements[state.withLock { $0.started } % placements.count]
            let command = placement.launcher + [binary] + arguments
            let port = try LocalRedisServer.freePort()
            // Its output and logs go to this process's.
            let process = try ChildProcess(
                executable: command[0], arguments: Array(command.dropFirst()),
                environment: environment.merging(["PUSHFLEET__METRICS__PORT": String(port)]) { $1 }, output: .descriptor(STDOUT_FILENO),
                error: .descriptor(STDERR_FILENO))
            state.withLock {
                $0.running.append(process)
                $0.started += 1
                $0.metricsURLs[process.processIdentifier] = URL(string: "http://\(placement.address):\(port)/metrics")!
            }
        }
    }

    /// Waits until the consumer groups are settled (``SettledGroupsWatch``): every running worker
    /// reports its share of each group's partitions (`pushfleet_kafka_assigned_partitions`), the
    /// shares add up to `partitions[group]`, and no worker's member is in a rebalance
    /// (`pushfleet_kafka_group_rebalancing`), unchanged over two of the workers' group-state
    /// reports. A campaign published before that would pay for the fleet's own start-up
    /// rebalances (a late member's join moves partitions for seconds), and a baseline that did
    /// would not be a baseline.
    func awaitSettled(_ groups: WorkerGroups, timeout: Duration = .seconds(120)) async throws {
        let deadline = ContinuousClock.now + timeout
        var watch = SettledGroupsWatch(groups: groups)
        var views: [WorkerGroupView] = []
        while ContinuousClock.now < deadline {
            let urls = state.withLock { state in state.running.compactMap { state.metricsURLs[$0.processIdentifier] } }
            views = []
            for url in urls {
                views.append((try? await Self.groupView(url)) ?? WorkerGroupView(assigned: [:], rebalancing: [:]))
            }
            if watch.observe(views, at: .now) { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw BenchmarkError.failed(
            "the workers' consumer groups did not settle within \(timeout): workers report \(views), expected \(groups.partitions)")
    }

    /// The value of each series of the running workers' `/metrics` whose line starts with one
    /// of `prefixes` (name and labels), summed over the workers; a worker that does not answer
    /// counts nothing.
    func metrics(_ prefixes: [String]) async -> [String: Double] {
        let urls = state.withLock { state in state.running.compactMap { state.metricsURLs[$0.processIdentifier] } }
        var values: [String: Double] = [:]
        for url in urls {
            guard let body = try? await BenchmarkHTTP.get(url) else { continue }
            values.merge(WorkerMetricsText.values(body, prefixes: prefixes), uniquingKeysWith: +)
        }
        return values
    }

    /// The worker's consumer groups as its `/metrics` say.
    private static func groupView(_ url: URL) async throws -> WorkerGroupView {
        WorkerMetricsText.groupView(try await BenchmarkHTTP.get(url))
    }

    /// SIGKILLs the `index`-th running worker (modulo their count) and waits for it.
    func kill(_ index: Int) {
        guard let process = take(index) else { return }
        process.signal(SIGKILL)
        record(process.waitUntilExit(), expectedSignal: SIGKILL)
    }

    /// SIGTERMs the `index`-th running worker (modulo their count) and waits for it to exit.
    func stop(_ index: Int) {
        guard let process = take(index) else { return }
        let start = ContinuousClock.now
        process.terminate()
        let end = process.waitUntilExit()
        record(end, expectedSignal: nil, stopSeconds: (ContinuousClock.now - start).seconds)
    }

    /// SIGTERMs the `index`-th running worker (modulo their count) without waiting for it: it
    /// drains and leaves while the fault goes on. ``sample()`` and ``stopAll()`` record its end.
    func beginStop(_ index: Int) {
        guard let process = take(index) else { return }
        process.terminate()
        state.withLock { $0.leaving.append(process) }
    }

    /// Stops every running worker gracefully, and waits for those already leaving.
    func stopAll() {
        while runningCount > 0 { stop(0) }
        let leaving = state.withLock { state in
            defer { state.leaving.removeAll() }
            return state.leaving
        }
        for process in leaving {
            record(process.waitUntilExit(), expectedSignal: nil)
        }
    }

    /// Records each running worker's peak RSS (VmHWM) so far, and how every worker that ended
    /// since ended (a crash, or the exit of one leaving); call it while sampling.
    func sample() {
        let gone = state.withLock { state -> [ChildProcess.Termination] in
            var gone: [ChildProcess.Termination] = []
            for list in [\State.running, \State.leaving] {
                state[keyPath: list].removeAll { process in
                    guard let end = process.termination else { return false }
                    gone.append(end)
                    return true
                }
            }
            return gone
        }
        for end in gone { record(end, expectedSignal: nil) }
        let running = state.withLock { $0.running }
        for process in running { recordPeak(of: process) }
    }

    private func take(_ index: Int) -> ChildProcess? {
        let process = state.withLock { state -> ChildProcess? in
            guard !state.running.isEmpty else { return nil }
            return state.running.remove(at: index % state.running.count)
        }
        if let process { recordPeak(of: process) }
        return process
    }

    private func recordPeak(of process: ChildProcess) {
        let pid = process.processIdentifier
        let kilobytes = ResourceUsage.memoryKilobytes(pid, field: "VmHWM")
        state.withLock { $0.peakKilobytes[pid] = max($0.peakKilobytes[pid] ?? 0, kilobytes) }
    }

    private func record(_ end: ChildProcess.Termination, expectedSignal: Int32?, stopSeconds: Double? = nil) {
        let ended = Ended(signal: end.isSignal, status: end.status, expectedSignal: expectedSignal, stopSeconds: stopSeconds)
        state.withLock { $0.ended.append(ended) }
    }
}
