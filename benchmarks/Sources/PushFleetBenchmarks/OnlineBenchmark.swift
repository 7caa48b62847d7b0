import APNsCore
import ArgumentParser
import EmbeddedStack
import Foundation
import Kafka
import LocalRedis
import Logging
import NIOCore
import PushConfiguration
import PushCore
import PushGateway
import PushStore
import Redis
import Spawn

/// `pushfleet-bench online`: the online channel end to end on one machine. The embedded stack, one
/// `pushfleet worker` and one `pushfleet gateway` as processes of their own; `connections`
/// registered devices, each holding a WebSocket connection (``WebSocketLoad``, NIOWebSocket) that
/// acks every push at once. Measured:
/// - connect rate (connections upgraded and welcomed per second, 200 opening at a time) and the
///   gateway's RSS per connection;
/// - broadcasts to every connected device with `delivery: online-first`: from publication to the
///   last push received, as notifications per second, and the job's report (every device
///   `online`, none through APNs);
/// - latency from a job's publication to each ack at an offered rate (jobs of `jobSize`
///   devices, paced), p50 and p99;
/// - the reference in the same run: `pushfleet-bench websocket-echo` (NIOWebSocket, as the
///   gateway) as its own process, the same connections each sending one message per round and
///   counting its echo: the most round trips the library and the machine give.
struct OnlineBenchmark {
    struct Result: Codable, Sendable {
        var connections: Int
        var connectsPerSecond: Double
        var gatewayBytesPerConnection: Double
        var broadcastsPerSecond: [Double]
        var medianBroadcastPerSecond: Double
        var echoesPerSecond: [Double]
        var medianEchoPerSecond: Double
        var offeredPerSecond: Int
        var offeredSeconds: Int
        var offeredAcks: Int
        var latencyP50Milliseconds: Double
        var latencyP99Milliseconds: Double
        var online: Int
        var throughAPNs: Int
    }

    let pushfleet: String
    let bench: String
    let connections: Int
    let rounds: Int
    let offeredPerSecond: Int
    let offeredSeconds: Int
    let jobSize: Int
    let logger: Logger

    static let gatewayID = "gw-bench"

    func run() async throws -> Result {
        ResourceLimits.raiseOpenFiles()
        let stack = try await EmbeddedStack.start(EmbeddedStack.Options(), logger: logger)
        let fleet = WorkerFleet(binary: pushfleet, stack: stack, logLevel: "warning")
        return try await CampaignHarness.withClients(stack: stack, fleet: fleet, logger: logger) { producer, redis in
            defer { fleet.stopAll() }
            try await CampaignHarness.startOneWorker(registering: connections, stack: stack, fleet: fleet, producer: producer, redis: redis)

            let echo = try await measureEcho()
            let gateway = try await GatewayProcess.start(binary: pushfleet, stack: stack, id: Self.gatewayID)
            defer { gateway.process.terminate() }
            let restingKilobytes = ResourceUsage.memoryKilobytes(gateway.process.processIdentifier, field: "VmRSS")
            let load = WebSocketLoad(threads: 1)
            let secret = try stack.configuration.gateway.resolvedSecret()
            let tokens = ConnectToken(secret: secret)
            let expiry = Int64(Date().timeIntervalSince1970) + 3_600
            let connectStart = ContinuousClock.now
            try await open(connections) { n in
                let claims = ConnectToken.Claims(app: EmbeddedStack.app, device: CampaignHarness.token(n), expiresAt: expiry)
                try await load.connect(
                    port: gateway.port, path: "/v1/apps/\(EmbeddedStack.app)/connect?token=\(tokens.issue(claims))", awaitWelcome: true)
            }
            let connectSeconds = (ContinuousClock.now - connectStart).seconds
            let presence = PresenceStore(client: redis)
            try await waitUntil("every device's presence written") {
                let all = (0..<connections).map(CampaignHarness.token)
                var found = 0
                for start in stride(from: 0, to: all.count, by: 1_000) {
                    found += try await presence.lookup(app: EmbeddedStack.app, tokens: Array(all[start..<min(start + 1_000, all.count)])).count
                }
                return found == connections
            }
            let heldKilobytes = ResourceUsage.memoryKilobytes(gateway.process.processIdentifier, field: "VmRSS")

            let jobs = JobStore(client: redis)
            var broadcasts: [Double] = []
            var online = 0
            var throughAPNs = 0
            for round in 0..<rounds {
                let jobID = "online-broadcast-\(round)"
                let before = load.tally.pushes
                let start = ContinuousClock.now
                load.tally.published(jobID, at: start)
                try await CampaignHarness.publish(Self.job(jobID, audience: .broadcast), producer: producer)
                try await waitUntil("broadcast \(round) received") { load.tally.pushes - before >= connections }
                broadcasts.append(Double(connections) / (load.tally.lastAt - start).seconds)
                let report = try await waitForCompletion(jobID, jobs: jobs)
                online += report["online"] ?? 0
                throughAPNs += report["accepted"] ?? 0
            }
            _ = load.tally.takeLatencies()

            // The offered rate: jobs of `jobSize` devices, `offeredPerSecond / jobSize` a second.
            let jobsPerSecond = max(1, offeredPerSecond / jobSize)
            let interval = Duration.seconds(1) / jobsPerSecond
            let before = load.tally.pushes
            var published = 0
            let paceStart = ContinuousClock.now
            for index in 0..<(jobsPerSecond * offeredSeconds) {
                let first = (index * jobSize) % max(connections - jobSize + 1, 1)
                let jobID = "online-offered-\(index)"
                try await Task.sleep(until: paceStart + interval * index, clock: .continuous)
                load.tally.published(jobID, at: .now)
                let audience = Audience.tokens((first..<first + jobSize).map(CampaignHarness.token))
                try await CampaignHarness.publish(Self.job(jobID, audience: audience), producer: producer)
                published += jobSize
            }
            try await waitUntil("the offered jobs received") { load.tally.pushes - before >= published }
            let latencies = load.tally.takeLatencies().sorted()
            await load.shutdown()

            return Result(
                connections: connections, connectsPerSecond: Double(connections) / connectSeconds,
                gatewayBytesPerConnection: Double((heldKilobytes - restingKilobytes) * 1_024) / Double(connections),
                broadcastsPerSecond: broadcasts, medianBroadcastPerSecond: Statistics.median(broadcasts) ?? 0,
                echoesPerSecond: echo, medianEchoPerSecond: Statistics.median(echo) ?? 0,
                offeredPerSecond: jobsPerSecond * jobSize, offeredSeconds: offeredSeconds, offeredAcks: latencies.count,
                latencyP50Milliseconds: Self.percentile(latencies, 0.50), latencyP99Milliseconds: Self.percentile(latencies, 0.99),
                online: online, throughAPNs: throughAPNs)
        }
    }

    /// The reference: the echo server in a process of its own, `rounds` rounds of one message per
    /// connection; echoes per second of each round.
    private func measureEcho() async throws -> [Double] {
        let port = try LocalRedisServer.freePort()
        let server = try ChildProcess(
            executable: bench, arguments: ["websocket-echo", "--port", String(port)], output: .null, error: .descriptor(STDERR_FILENO))
        defer { server.terminate() }
        try await waitUntil("the echo server listening") { BenchmarkPorts.isListening(port) }
        let load = WebSocketLoad(threads: 1)
        try await open(connections) { _ in try await load.connect(port: port, path: "/echo", awaitWelcome: false) }
        let message = Array(Self.echoMessage.utf8)
        var rates: [Double] = []
        for _ in 0..<rounds {
            let before = load.tally.echoes
            let start = ContinuousClock.now
            load.sendToAll(message)
            try await waitUntil("every echo") { load.tally.echoes - before >= connections }
            rates.append(Double(connections) / (load.tally.lastAt - start).seconds)
        }
        await load.shutdown()
        return rates
    }

    /// A frame of the size of a broadcast's push, in the echo's own type.
    static let echoMessage =
        #"{"type":"echo","id":"online-broadcast-0:12345","job":"online-broadcast-0","push-type":"alert","notification":{"aps":{"alert":{"title":"Online","body":"PushFleet"}},"pushfleet":{"job":"online-broadcast-0"}}}"#

    /// Opens `count` connections, 200 at a time.
    private func open(_ count: Int, _ connect: @escaping @Sendable (Int) async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            while next < min(200, count) {
                let n = next
                group.addTask { try await connect(n) }
                next += 1
            }
            while try await group.next() != nil {
                if next < count {
                    let n = next
                    group.addTask { try await connect(n) }
                    next += 1
                }
            }
        }
    }

    static func job(_ id: String, audience: Audience) -> PushJob {
        var job = PushJob(
            id: id, app: EmbeddedStack.app, environment: .sandbox, audience: audience,
            notification: APNsPayload(["aps": ["alert": ["title": "Online", "body": "PushFleet"]], "pushfleet": ["job": .string(id)]]),
            headers: PushHeaders(pushType: .alert))
        job.delivery = .onlineFirst
        return job
    }

    private func waitForCompletion(_ jobID: String, jobs: JobStore) async throws -> [String: Int] {
        var statistics: [String: Int] = [:]
        try await waitUntil("job \(jobID) settled") {
            statistics = try await jobs.statistics(jobID: jobID)
            return (statistics["online"] ?? 0) + (statistics["accepted"] ?? 0) >= connections
        }
        return statistics
    }

    /// The value at `fraction` of sorted `values` (nearest rank); 0 when there are none.
    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    private func waitUntil(_ what: String, timeout: Duration = .seconds(300), _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw BenchmarkError.failed("\(what): not within \(timeout)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// A `pushfleet gateway` process on the stack, with its id, once it consumes `push.online`.
struct GatewayProcess {
    let process: ChildProcess
    let port: Int
    /// Where its `/metrics` are served.
    let metricsPort: Int

    /// The gateway's online sends by outcome (`acked`, `no-ack`, `connection-lost`,
    /// `not-connected`) and its late acks (`late-acks`), from its `/metrics`.
    func sendOutcomes() async throws -> [String: Int] {
        let outcomes = ["acked", "no-ack", "connection-lost", "not-connected"]
        let prefixes = outcomes.map { #"pushfleet_gateway_online_sends_total{outcome=""# + $0 + #"""# } + ["pushfleet_gateway_late_acks_total"]
        let body = try await BenchmarkHTTP.get(URL(string: "http://127.0.0.1:\(metricsPort)/metrics")!)
        let values = WorkerMetricsText.values(body, prefixes: prefixes)
        var figures: [String: Int] = [:]
        for (name, prefix) in zip(outcomes + ["late-acks"], prefixes) { figures[name] = Int(values[prefix] ?? 0) }
        return figures
    }

    static func start(binary: String, stack: EmbeddedStack, id: String, environment settings: [String: String] = [:]) async throws -> GatewayProcess {
        let port = try LocalRedisServer.freePort()
        let metricsPort = try LocalRedisServer.freePort()
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-bench-gateway-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw BenchmarkError.failed("cannot create \(log.path)")
        }
        let handle = try FileHandle(forWritingTo: log)
        var environment = ProcessInfo.processInfo.environment
        environment.merge(settings) { $1 }
        environment["PUSHFLEET__GATEWAY__ID"] = id
        environment["PUSHFLEET__METRICS__PORT"] = String(metricsPort)
        let process = try ChildProcess(
            executable: binary,
            arguments: ["gateway", "--config", stack.configurationPath, "--log-level", "info", "--port", String(port)],
            environment: environment, output: .descriptor(handle.fileDescriptor))
        try handle.close()
        let deadline = ContinuousClock.now + .seconds(60)
        while !((try? String(contentsOf: log, encoding: .utf8))?.contains("gateway consuming push.online") ?? false) {
            guard ContinuousClock.now < deadline, process.isRunning else {
                throw BenchmarkError.failed("the gateway did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return GatewayProcess(process: process, port: port, metricsPort: metricsPort)
    }
}

/// Whether a loopback port listens.
enum BenchmarkPorts {
    static func isListening(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// This process's descriptor limit, raised to its hard limit (children inherit it).
enum ResourceLimits {
    static func raiseOpenFiles() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

struct OnlineBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "online",
        abstract:
            "The online channel: connect rate, gateway memory per connection, online-first broadcasts acked per second, latency at an offered rate, against a WebSocket echo in the same run; then its faults, counted (a gateway SIGKILLed, presence lost, devices that never ack)."
    )

    @Flag(
        help:
            "Quick mode for CI: 1,000 connections, 2 rounds, 2,000/s offered for 3 s in jobs of 100, faults on 1,000 devices; results named online-quick."
    )
    var quick = false
    @Option(help: "The pushfleet binary (build it in release mode).") var pushfleet = ".build/release/pushfleet"
    @Option(help: "This benchmark's binary (it serves the echo reference).") var bench = ".build/release/pushfleet-bench"
    @Option(help: "Devices, each with a connection (the descriptor limit bounds it: about half of `ulimit -Hn`; default 10,000).") var connections:
        Int?
    @Option(help: "Broadcasts, and echo rounds; medians are reported (default 5).") var rounds: Int?
    @Option(help: "Offered notifications per second for the latency measurement (default 10,000).") var offeredRate: Int?
    @Option(help: "Seconds the offered rate lasts (default 10).") var offeredSeconds: Int?
    @Option(help: "Devices per job at the offered rate (default 1,000).") var jobSize: Int?
    @Option(
        help:
            "Fault scenarios, comma separated (\(OnlineFaultScenario.allCases.map(\.rawValue).joined(separator: ", "))); 'none' skips them. Default all."
    )
    var scenarios = "all"
    @Option(help: "Devices of each fault scenario, half on each gateway (default 10,000; 1,000 with --quick).") var faultDevices: Int?
    @Flag(help: "Only the fault scenarios.") var faultsOnly = false
    @OptionGroup var output: ResultOptions

    struct Report: Codable {
        var throughput: OnlineBenchmark.Result?
        var faults: [OnlineFaultOutcome]
    }

    func run() async throws {
        var logger = Logger(label: "pushfleet-bench")
        logger.logLevel = .warning
        let selected = scenarios == "none" ? [] : scenarios == "all" ? OnlineFaultScenario.allCases : try OnlineFaultScenario.parse(scenarios)
        let size = jobSize ?? (quick ? 100 : 1_000)
        var report = Report(throughput: nil, faults: [])
        if !faultsOnly {
            report.throughput = try await OnlineBenchmark(
                pushfleet: pushfleet, bench: bench, connections: connections ?? (quick ? 1_000 : 10_000), rounds: rounds ?? (quick ? 2 : 5),
                offeredPerSecond: offeredRate ?? (quick ? 2_000 : 10_000), offeredSeconds: offeredSeconds ?? (quick ? 3 : 10), jobSize: size,
                logger: logger
            ).run()
        }
        ResourceLimits.raiseOpenFiles()
        for scenario in selected {
            let outcome = try await OnlineFaultRun(
                scenario: scenario, devices: faultDevices ?? (quick ? 1_000 : 10_000), pushfleet: pushfleet, logger: logger
            ).run()
            print(outcome.line)
            report.faults.append(outcome)
        }
        try output.write(name: quick ? "online-quick" : "online", result: report, markdown: Self.markdown(report, jobSize: size))
        let failed = report.faults.filter { !$0.violations.isEmpty }
        guard failed.isEmpty else {
            throw BenchmarkError.failed(failed.map { "\($0.scenario): \($0.violations.joined(separator: "; "))" }.joined(separator: "\n"))
        }
    }

    static func markdown(_ report: Report, jobSize: Int) -> String {
        var sections: [String] = []
        if let result = report.throughput {
            func list(_ values: [Double]) -> String { values.map { String(Int($0)) }.joined(separator: ", ") }
            sections.append(
                """
                \(result.connections) devices, each holding a WebSocket connection (SwiftNIO NIOWebSocket clients in this process, acking every push at once) to one `pushfleet gateway`; one `pushfleet worker`; the embedded stack (librdkafka's mock cluster, one redis-server). The reference, in the same run: `pushfleet-bench websocket-echo`, a NIOWebSocket echo server in a process of its own, the same clients each sending one message of a push's size per round and counting its echo.

                | figure | value |
                |---|---:|
                | connects (upgraded and welcomed, 200 at a time) | \(Int(result.connectsPerSecond))/s |
                | gateway RSS per connection | \(Int(result.gatewayBytesPerConnection)) bytes |
                | online-first broadcast, publication to the last push received (median of \(result.broadcastsPerSecond.count)) | \(Int(result.medianBroadcastPerSecond)) notifications/s |
                | echo reference, one round trip per connection (median of \(result.echoesPerSecond.count)) | \(Int(result.medianEchoPerSecond)) round trips/s |
                | broadcast / echo | \(String(format: "%.1f%%", result.medianBroadcastPerSecond / result.medianEchoPerSecond * 100)) |
                | offered \(result.offeredPerSecond)/s for \(result.offeredSeconds) s (jobs of \(jobSize)): publication → ack p50 | \(String(format: "%.1f", result.latencyP50Milliseconds)) ms |
                | the same, p99 (\(result.offeredAcks) acks) | \(String(format: "%.1f", result.latencyP99Milliseconds)) ms |

                Broadcasts per round: \(list(result.broadcastsPerSecond)) notifications/s; echo rounds: \(list(result.echoesPerSecond)) round trips/s. The broadcasts' reports: \(result.online) notifications `online`, \(result.throughAPNs) through APNs.
                """)
        }
        if !report.faults.isEmpty {
            var table = """
                ## Faults

                Each scenario: a fresh embedded stack, one `pushfleet worker` (`chunk-size: 100`), two `pushfleet gateway` processes (`gw-a` holds the even devices, `gw-b` the odd ones; `ack-timeout-ms: \(OnlineFaultRun.ackTimeoutMilliseconds)`, so a send handed over falls back after \(2 * OnlineFaultRun.ackTimeoutMilliseconds) ms), every device connected, one broadcast. *Received online*: devices a push frame of the job reached (live or replayed from the inbox). *Through APNs*: devices the simulator accepted it for. *Missed*: neither. *Twice*: both, against *in flight*, the sends no live gateway heard acknowledged in time (what the killed gateway's devices received from it, the never-acking devices, and the sends a live gateway wrote and handed back: *handed back*, with the acks it heard too late). The report's figures are the job's own counters: each notification ends once.

                | scenario | delivery | fault | devices | received online | through APNs | missed | twice / in flight | handed back / late acks | report: online / accepted / inboxed / inbox-read | reconnected | seconds | meets expectations |
                |---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|
                """
            for outcome in report.faults {
                table +=
                    "\n| \(outcome.scenario) | \(outcome.delivery) | \(outcome.fault) | \(outcome.devices) | \(outcome.receivedOnline) | \(outcome.throughAPNs) | \(outcome.missed) | \(outcome.twice) / \(outcome.inFlightAtFault) | \(outcome.handedBackAfterWriting) / \(outcome.lateAcks) | \(outcome.online) / \(outcome.accepted) / \(outcome.inboxed) / \(outcome.inboxRead) | \(outcome.reconnected) | \(String(format: "%.1f", outcome.seconds)) | \(outcome.violations.isEmpty ? "yes" : "**no**: " + outcome.violations.joined(separator: "; ")) |"
            }
            sections.append(table)
        }
        return sections.joined(separator: "\n\n")
    }
}

struct WebSocketEchoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "websocket-echo", abstract: "The echo reference of `online`: a NIOWebSocket server answering every text frame.",
        shouldDisplay: false)

    @Option(help: "Port on 127.0.0.1.") var port: Int
    @Option(help: "Event loop threads (default: one per core, as the gateway).") var threads = System.coreCount

    func run() async throws {
        let server = try await WebSocketEcho.serve(port: port, threads: threads)
        try await server.closeFuture.get()
    }
}
