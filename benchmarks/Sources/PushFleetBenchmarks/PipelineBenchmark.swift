import APNs
import APNsCore
import APNsSimulator
import ArgumentParser
import Crypto
import EmbeddedStack
import Foundation
import Kafka
import Logging
import PushCore
import PushStore
import Redis

/// End-to-end broadcast: the embedded stack (mock Kafka and the simulator in this process, a
/// redis-server), N registered devices, 1, 2, … `pushfleet worker` processes, one broadcast job.
/// Measures job publish → last acceptance, throughput over time, worker CPU and RSS (at 10% of
/// the audience and at the end, to show it does not grow with the audience), and h2load against
/// the same simulator in the same run as the machine's HTTP/2 reference.
struct PipelineBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline", abstract: "Broadcast end to end through worker processes, with h2load as the reference.")

    @Option(help: "Registered devices; the broadcast goes to all of them.") var devices = 1_000_000
    @Option(help: "Worker process counts to run, comma separated.") var workers = "1,2"
    @Option(help: "Partitions of push.deliveries (the mock cluster keeps ~5 MB each).") var deliveryPartitions: Int32 = 64
    @Option(help: "The pushfleet binary (build it in release mode).") var pushfleet = ".build/release/pushfleet"
    @Option(help: "apns.connections-per-pool of the workers.") var connections = 2
    @Option(help: "Log level of the worker processes (their standard error).") var workerLogLevel = "warning"
    @Option(help: "apns.streams-per-connection of the workers.") var streams = 100
    @Option(help: "The h2load binary.") var h2load = "h2load"
    @Option(help: "Notifications of the h2load reference run.") var h2loadCount = 200_000
    @OptionGroup var results: ResultOptions

    func run() async throws {
        var logger = Logger(label: "pushfleet.bench")
        logger.logLevel = .error
        let workerCounts = workers.split(separator: ",").compactMap { Int($0) }
        var options = EmbeddedStack.Options()
        options.deliveryPartitions = deliveryPartitions
        options.jobPartitions = 16
        options.simulatorThreads = 1
        options.workerSettings = ["chunks-in-flight: 4", "notifications-in-flight: 2000"]
        let stack = try await EmbeddedStack.start(options, logger: logger) { $0.tracksDuplicates = false }
        defer { try? FileManager.default.removeItem(at: stack.directory) }

        let redis = RedisClient(configuration: stack.redisServer.configuration)
        let registry = DeviceRegistry(client: redis)
        print("registering \(devices) devices")
        let registerStart = ContinuousClock.now
        for start in stride(from: 0, to: devices, by: 100_000) {
            let batch = (start..<min(start + 100_000, devices)).map {
                DeviceRegistration(token: Self.token($0), environment: .sandbox, openID: nil, tags: [], registeredAt: nil)
            }
            try await registry.bind(batch, app: EmbeddedStack.app)
        }
        let registerSeconds = (ContinuousClock.now - registerStart).seconds
        print("registered in \(String(format: "%.1f", registerSeconds)) s")

        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: stack.cluster.bootstrapServers), logger: logger)
        var runs: [PipelineRun] = []
        for count in workerCounts {
            runs.append(try await runCampaign(workers: count, stack: stack, producer: producer, redis: redis))
        }
        await producer.close()

        let reference = try await h2loadReference(stack: stack)
        await redis.shutdown()
        await stack.stop()

        let report = PipelineBenchmarkReport(
            devices: devices, connectionsPerPool: connections, streamsPerConnection: streams, registrationSeconds: registerSeconds, runs: runs, h2load: reference)
        try results.write(name: "pipeline", result: report, markdown: report.markdown)
    }

    static func token(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "5e", count: 24) + String(format: "%016x", n))
    }

    private func runCampaign(workers: Int, stack: EmbeddedStack, producer: KafkaProducer, redis: RedisClient) async throws -> PipelineRun {
        print("campaign with \(workers) worker process(es)")
        let processes = try (0..<workers).map { _ in try startWorker(stack: stack) }
        defer {
            for process in processes where process.isRunning {
                kill(process.processIdentifier, SIGKILL)
            }
        }
        // Warm up: a one-token job proves every worker joined its groups and connected.
        let warmUp = "warm-up-\(workers)"
        try await publish(PushJob(id: warmUp, app: EmbeddedStack.app, environment: .sandbox, audience: .tokens([Self.token(0)]),
            notification: APNsPayload(["aps": ["alert": "warm-up"]]), headers: PushHeaders(pushType: .alert)), producer: producer)
        let jobs = JobStore(client: redis)
        while (try await jobs.statistics(jobID: warmUp)["accepted"] ?? 0) < 1 {
            try await Task.sleep(for: .milliseconds(100))
        }
        try await stack.simulator.reset()
        let cpuBefore = processes.map { ResourceUsage.cpuSeconds(ofProcess: $0.processIdentifier) }
        let benchCPUBefore = ResourceUsage.selfCPUSeconds()

        let jobID = "broadcast-\(workers)"
        let start = ContinuousClock.now
        try await publish(
            PushJob(
                id: jobID, app: EmbeddedStack.app, environment: .sandbox, audience: .broadcast,
                notification: APNsPayload(["aps": ["alert": ["title": "Benchmark", "body": .string(String(repeating: "x", count: 100))], "badge": 1]]),
                headers: PushHeaders(pushType: .alert)),
            producer: producer)
        var samples: [PipelineRun.Sample] = []
        var rssAtTenth: [Int] = []
        var accepted = 0
        var lastProgress = ContinuousClock.now
        var lastAccepted = 0
        while accepted < devices {
            try await Task.sleep(for: .milliseconds(250))
            accepted = try await stack.simulator.counters().accepted
            let elapsed = (ContinuousClock.now - start).seconds
            let rss = processes.map { ResourceUsage.memoryKilobytes($0.processIdentifier, field: "VmRSS") }
            samples.append(PipelineRun.Sample(seconds: elapsed, accepted: accepted, workerRSSMegabytes: rss.map { Double($0) / 1024 }))
            if rssAtTenth.isEmpty && accepted >= devices / 10 { rssAtTenth = rss }
            if accepted > lastAccepted {
                lastAccepted = accepted
                lastProgress = .now
            } else if ContinuousClock.now - lastProgress > .seconds(60) {
                throw BenchmarkError.failed("no progress for 60 s at \(accepted) of \(devices)")
            }
        }
        let seconds = (ContinuousClock.now - start).seconds
        let workerCPU = zip(processes, cpuBefore).map { ResourceUsage.cpuSeconds(ofProcess: $0.processIdentifier) - $1 }
        let benchCPU = ResourceUsage.selfCPUSeconds() - benchCPUBefore
        let rssAtEnd = processes.map { ResourceUsage.memoryKilobytes($0.processIdentifier, field: "VmRSS") }
        let peak = processes.map { ResourceUsage.memoryKilobytes($0.processIdentifier, field: "VmHWM") }
        let counters = try await stack.simulator.counters()
        let statistics = try await jobs.statistics(jobID: jobID)
        var exitStatuses: [Int32] = []
        for process in processes {
            process.terminate()
            process.waitUntilExit()
            exitStatuses.append(process.terminationStatus)
        }
        let run = PipelineRun(
            workers: workers, notifications: accepted, seconds: seconds, notificationsPerSecond: Double(accepted) / seconds,
            workerCPUSecondsPer100k: workerCPU.reduce(0, +) / Double(accepted) * 100_000,
            benchProcessCPUSecondsPer100k: benchCPU / Double(accepted) * 100_000,
            workerRSSAtTenthMegabytes: rssAtTenth.map { Double($0) / 1024 },
            workerRSSAtEndMegabytes: rssAtEnd.map { Double($0) / 1024 },
            workerPeakRSSMegabytes: peak.map { Double($0) / 1024 },
            simulatorRequests: counters.requests, jobAccepted: statistics["accepted"] ?? 0, workerExitStatuses: exitStatuses,
            samples: samples)
        print(run.line)
        return run
    }

    private func publish(_ job: PushJob, producer: KafkaProducer) async throws {
        _ = try await producer.send(KafkaProducerMessage(topic: PushTopic.jobs, key: job.id, value: job.jsonData()))
    }

    private func startWorker(stack: EmbeddedStack) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: pushfleet)
        process.arguments = stack.workerArguments(logLevel: workerLogLevel)
        process.environment = ProcessInfo.processInfo.environment.merging([
            "PUSHFLEET__APNS__CONNECTIONS_PER_POOL": String(connections),
            "PUSHFLEET__APNS__STREAMS_PER_CONNECTION": String(streams),
        ]) { $1 }
        try process.run()
        return process
    }

    private func h2loadReference(stack: EmbeddedStack) async throws -> APNsBenchmarkReport.Measurement {
        let keyPEM = try String(contentsOf: stack.directory.appendingPathComponent("\(EmbeddedStack.app).p8"), encoding: .utf8)
        let token = try APNsProviderToken(
            teamID: EmbeddedStack.teamID, keyID: EmbeddedStack.keyID, privateKey: P256.Signing.PrivateKey(pemRepresentation: keyPEM),
            issuedAt: Date())
        let payloadFile = stack.directory.appendingPathComponent("payload.json")
        try Data((#"{"aps":{"alert":{"title":"Benchmark","body":""# + String(repeating: "x", count: 100) + #""},"badge":1}}"#).utf8)
            .write(to: payloadFile)
        let references = ReferenceClients(
            port: stack.simulator.port, directory: stack.directory, authorization: token.value,
            topic: EmbeddedStack.bundleID, deviceToken: Self.token(1).hex, payloadFile: payloadFile, simulatorPID: getpid())
        let binary = h2load
        let count = h2loadCount
        return try await Task.detached {
            try references.h2load(binary: binary, connections: 2, streamsPerConnection: 100, count: count)
        }.value
    }
}

struct PipelineRun: Codable {
    struct Sample: Codable {
        var seconds: Double
        var accepted: Int
        var workerRSSMegabytes: [Double]
    }

    var workers: Int
    var notifications: Int
    var seconds: Double
    var notificationsPerSecond: Double
    var workerCPUSecondsPer100k: Double
    var benchProcessCPUSecondsPer100k: Double
    var workerRSSAtTenthMegabytes: [Double]
    var workerRSSAtEndMegabytes: [Double]
    var workerPeakRSSMegabytes: [Double]
    var simulatorRequests: Int
    var jobAccepted: Int
    var workerExitStatuses: [Int32]
    var samples: [Sample]

    var line: String {
        String(
            format: "%d worker(s): %d notifications in %.1f s = %.0f/s; worker CPU %.2f s/100k; RSS at 10%% %@ MB, at end %@ MB, peak %@ MB",
            workers, notifications, seconds, notificationsPerSecond, workerCPUSecondsPer100k,
            workerRSSAtTenthMegabytes.map { String(format: "%.0f", $0) }.joined(separator: "/"),
            workerRSSAtEndMegabytes.map { String(format: "%.0f", $0) }.joined(separator: "/"),
            workerPeakRSSMegabytes.map { String(format: "%.0f", $0) }.joined(separator: "/"))
    }
}

struct PipelineBenchmarkReport: Codable {
    var devices: Int
    var connectionsPerPool: Int
    var streamsPerConnection: Int
    var registrationSeconds: Double
    var runs: [PipelineRun]
    var h2load: APNsBenchmarkReport.Measurement

    var markdown: String {
        var lines = [
            "Broadcast to \(devices) registered devices (registered in \(String(format: "%.1f", registrationSeconds)) s), job publish → last acceptance by the simulator. Embedded Kafka and the simulator run in the benchmark process; workers are `pushfleet worker` processes (expand, send, feedback), each with \(connectionsPerPool) APNs connections × \(streamsPerConnection) streams.",
            "",
            "| workers | seconds | notifications/s | vs h2load | worker CPU s / 100k | worker RSS at 10% (MB) | at end (MB) | peak (MB) | exit |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for run in runs {
            func megabytes(_ values: [Double]) -> String { values.map { String(format: "%.0f", $0) }.joined(separator: " / ") }
            lines.append(
                "| \(run.workers) | \(String(format: "%.1f", run.seconds)) | \(String(format: "%.0f", run.notificationsPerSecond)) | \(String(format: "%.0f%%", run.notificationsPerSecond / h2load.notificationsPerSecond * 100)) | \(String(format: "%.2f", run.workerCPUSecondsPer100k)) | \(megabytes(run.workerRSSAtTenthMegabytes)) | \(megabytes(run.workerRSSAtEndMegabytes)) | \(megabytes(run.workerPeakRSSMegabytes)) | \(run.workerExitStatuses.map(String.init).joined(separator: ",")) |")
        }
        lines += [
            "",
            "Reference in the same run: h2load, 2 connections × 100 streams, \(h2load.notifications) requests to the same simulator: \(String(format: "%.0f", h2load.notificationsPerSecond))/s (the machine's HTTP/2 limit with this simulator; it shares the 2 cores with nothing else then).",
        ]
        return lines.joined(separator: "\n")
    }
}
