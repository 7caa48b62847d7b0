import ArgumentParser
import Foundation
import Logging

/// `pushfleet-bench`: capacity benchmarks measured against reference tools in the same run.
@main
struct PushFleetBenchmarks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushfleet-bench",
        abstract: "PushFleet benchmarks, each against a reference tool on the same machine in the same run.",
        subcommands: [
            KafkaCommand.self, RedisCommand.self, StateCommand.self, APNsBenchmarkCommand.self, PipelineBenchmarkCommand.self,
            FaultBenchmarkCommand.self, PartitionBenchmarkCommand.self, SoakBenchmarkCommand.self, BinaryBenchmarkCommand.self,
            WANBenchmarkCommand.self, LocationBenchmarkCommand.self, DeviceTimeBenchmarkCommand.self, OnlineBenchmarkCommand.self,
            WebSocketEchoCommand.self,
        ])
}

struct ResultOptions: ParsableArguments {
    @Option(help: "Directory for the JSON and Markdown results.")
    var results = "benchmarks/results"

    func write<T: Encodable>(name: String, result: T, markdown: String) throws {
        let machine = MachineDescription.current()
        try FileManager.default.createDirectory(atPath: results, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(BenchmarkEnvelope(machine: machine, result: result))
            .write(to: URL(fileURLWithPath: results).appendingPathComponent("\(name).json"))
        let document = "# \(name)\n\nMachine: \(machine.markdown)\n\n\(markdown)\n"
        try document.write(toFile: "\(results)/\(name).md", atomically: true, encoding: .utf8)
        print(document)
    }

    /// Runs a chart script (matplotlib) on the result `name`, writing `<name>.png` beside it.
    func plot(name: String, python: String, script: String) throws {
        let output = try BenchmarkProcess.run(python, [script, "\(results)/\(name).json", "\(results)/\(name).png"])
        guard output.status == 0 else {
            throw BenchmarkError.failed("\(script) exited with \(output.status): \(output.standardError)")
        }
        print("chart: \(results)/\(name).png")
    }
}

struct KafkaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kafka", abstract: "Produce and consume throughput: the wrapper against kcat.")

    // The embedded cluster keeps about 5 MB per partition and drops older data, so the
    // defaults keep each partition well under that (200,000 × ~230 B over 16 partitions).
    @Option(help: "Messages per side.") var messages = 200_000
    @Option(help: "Partitions of each topic.") var partitions: Int32 = 16
    @Option(help: "Rounds; medians are reported.") var rounds = 10
    @Option(
        help: """
            Producer send calls of 10,000 messages in flight at once. 4 costs the least CPU \
            per message (measured against 8 and 16, which keep more of the producer's \
            100,000-message window busy and run more senders at once on two cores).
            """)
    var batchesInFlight = 4
    @OptionGroup var output: ResultOptions

    func run() async throws {
        var logger = Logger(label: "pushfleet-bench")
        logger.logLevel = .warning
        let result = try await KafkaBenchmark(
            messages: messages, partitions: partitions, rounds: rounds, batchesInFlight: batchesInFlight, logger: logger
        ).run()
        let table = """
            \(result.messages) keyed messages of \(result.messageBytes) bytes, \(result.partitions) partitions, embedded cluster (1 broker); producers idempotent, acks=all, linger.ms=5, each message confirmed and every message counted in its topic afterwards, the wrapper first in odd rounds and kcat first in even ones, at most 100,000 unconfirmed (the wrapper with \(batchesInFlight) send calls of 10,000 in flight, kcat by queue.buffering.max.messages); both consumers read the topic the wrapper produced, from the beginning, each in its own group, fetch.wait.max.ms=10 (the embedded brokers hold a fetch for its full wait).

            | | wrapper (msg/s) | kcat (msg/s) | wrapper / kcat |
            |---|---:|---:|---:|
            | produce | \(Int(result.wrapperProducePerSecond)) | \(Int(result.kcatProducePerSecond)) | \(String(format: "%.0f%%", result.produceRatio * 100)) |
            | consume | \(Int(result.wrapperConsumePerSecond)) | \(Int(result.kcatConsumePerSecond)) | \(String(format: "%.0f%%", result.consumeRatio * 100)) |

            CPU of producing, producer and embedded broker together (user + system, medians): the wrapper \(String(format: "%.3f", result.wrapperProduceCPUPer100k)) s and kcat \(String(format: "%.3f", result.kcatProduceCPUPer100k)) s per 100,000 messages.

            Most of a read is joining the group: the first message came after \(String(format: "%.2f", result.wrapperFirstMessageSeconds)) s through the wrapper and \(String(format: "%.2f", result.kcatFirstMessageSeconds)) s through kcat (a separate `kcat -c 1` run in a fresh group, process start included); the rest of the \(result.messages) then took the wrapper \(String(format: "%.2f", result.wrapperAfterFirstMessageSeconds)) s and kcat about \(String(format: "%.2f", result.kcatAfterFirstMessageSeconds)) s (medians of the per-round figures).

            Medians of \(result.rounds.count) rounds; the ratio is the median of per-round ratios.
            Per round (wrapper/kcat msg/s): produce \(result.rounds.map { "\(Int($0.wrapperProducePerSecond))/\(Int($0.kcatProducePerSecond))" }.joined(separator: ", ")); consume \(result.rounds.map { "\(Int($0.wrapperConsumePerSecond))/\(Int($0.kcatConsumePerSecond))" }.joined(separator: ", ")).

            Target: the wrapper at 80% of kcat or more.
            """
        try output.write(name: "kafka", result: result, markdown: table)
    }
}

/// A result file: the figures and the machine they were measured on.
struct BenchmarkEnvelope<Result: Encodable>: Encodable {
    let machine: MachineDescription
    let result: Result
}

struct RedisCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redis", abstract: "Pipelined SET/SADD throughput: the wrapper against redis-benchmark -P.")

    @Option(
        help: "Commands per measurement (default 1,000,000; 5,000,000 with --cluster, where redis-benchmark's elapsed time comes in steps of 250 ms)."
    )
    var operations: Int?
    @Option(help: "Commands per pipelined batch.") var pipeline = 100
    @Option(help: "Connections on both sides.") var connections = 4
    @Option(help: "Rounds; medians are reported.") var rounds = 3
    @Flag(help: "A Redis Cluster of 3 masters against redis-benchmark --cluster.") var cluster = false
    @OptionGroup var output: ResultOptions

    struct Figures: Encodable {
        let command: String
        let wrapperPerSecond: Double
        let redisBenchmarkPerSecond: Double
        let ratio: Double
        let wrapperRounds: [Double]
        let redisBenchmarkRounds: [Double]
    }

    func run() async throws {
        var settings = RedisBenchmark.Settings()
        let operations = self.operations ?? (cluster ? 5_000_000 : 1_000_000)
        settings.operations = operations
        settings.pipelineDepth = pipeline
        settings.connections = connections
        settings.rounds = rounds
        settings.cluster = cluster
        let result = try await RedisBenchmark.run(settings)
        let figures = result.measurements.map {
            Figures(
                command: $0.command, wrapperPerSecond: $0.wrapper, redisBenchmarkPerSecond: $0.redisBenchmark,
                ratio: $0.ratio, wrapperRounds: $0.wrapperRounds, redisBenchmarkRounds: $0.redisBenchmarkRounds)
        }
        var table = """
            \(cluster ? "Redis Cluster of 3 masters (redis-benchmark --cluster): on both sides each connection is bound to a master in turn and its keys carry a hash tag of that master, as redis-benchmark's clients do; `SET spread` batches cover every slot, so the client splits each over the masters (set against redis-benchmark's SET for information). " : "One redis-server; ")\(operations) commands per measurement, pipeline \(pipeline), \(connections) connections on both sides, median of \(rounds) rounds; ratio is the median of per-round ratios.

            | command | wrapper (ops/s) | redis-benchmark -P \(pipeline) (ops/s) | wrapper / redis-benchmark |
            |---|---:|---:|---:|

            """
        for figure in figures {
            table +=
                "| \(figure.command) | \(Int(figure.wrapperPerSecond)) | \(Int(figure.redisBenchmarkPerSecond)) | \(String(format: "%.0f%%", figure.ratio * 100)) |\n"
        }
        table += "\nTarget: the wrapper at 70% of redis-benchmark or more\(cluster ? " (SET and SADD)" : "").\n\n```\n\(result.table)\n```"
        try output.write(name: cluster ? "redis-cluster" : "redis", result: figures, markdown: table)
    }
}

struct StateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Redis memory per registered device and per sent token, and the import rate beside redis-benchmark's HSET.")

    @Option(help: "Devices to register (and tokens of the job).") var devices = 1_000_000
    @Flag(help: "A Redis Cluster of 3 masters instead of one redis-server.") var cluster = false
    @Option(help: "The pushfleet binary (build it in release mode).") var pushfleet = ".build/release/pushfleet"
    @OptionGroup var output: ResultOptions

    func run() async throws {
        var settings = StateBenchmark.Settings()
        settings.devices = devices
        settings.cluster = cluster
        settings.pushfleetPath = pushfleet
        let result = try await StateBenchmark.run(settings)
        let markdown = """
            \(result.devices) devices (32-byte token, one tag, no openid) on \(result.backend); then one job's \(result.devices) sent outcomes.

            | figure | value |
            |---|---:|
            | Redis memory per registered device | \(String(format: "%.1f", result.bytesPerDevice)) bytes (\(result.registryBytes) in all) |
            | Redis memory per sent token of a job | \(String(format: "%.2f", result.bytesPerSentToken)) bytes (\(result.sentStateBytes) in all) |
            | the job's sent-state keys; the largest holds | \(result.sentStateKeys); \(String(format: "%.1f", result.largestSentKeyShare * 100))% of its tokens |
            | `pushfleet devices import` of a CSV file (process start to exit) | \(Int(result.importPerSecond)) devices/s (\(String(format: "%.1f", result.importSeconds)) s) |
            | the import's CPU per device: the `pushfleet` process; Redis | \(String(format: "%.2f", result.importProcessCPUMicrosecondsPerDevice ?? 0)) µs; \(String(format: "%.2f", result.importRedisCPUMicrosecondsPerDevice ?? 0)) µs (\(String(format: "%.1f", (result.importRedisCPUMicrosecondsPerDevice ?? 0) / max(result.redisBenchmarkRedisCPUMicrosecondsPerHSET ?? 0, 1e-9))) reference HSETs) |
            | DeviceRegistry.bind in-process, the same devices | \(Int(result.bindPerSecond)) devices/s |
            | redis-benchmark -t hset -P 100 -c 8, same run | \(Int(result.redisBenchmarkHSETPerSecond)) HSET/s; Redis CPU \(String(format: "%.2f", result.redisBenchmarkRedisCPUMicrosecondsPerHSET ?? 0)) µs per HSET |
            | a broadcast's scan of every shard task | \(String(format: "%.1f", result.scanSeconds)) s |
            | recording the job's outcomes | \(String(format: "%.1f", result.outcomesSeconds)) s |
            | `pushfleet devices export` of every device (process start to exit) | \(Int(Double(result.devices) / result.exportSeconds)) devices/s (\(String(format: "%.1f", result.exportSeconds)) s) |
            | `pushfleet devices remove-tag` of the tag every device carries (process start to exit) | \(Int(Double(result.devices) / result.removeTagSeconds)) devices/s (\(String(format: "%.1f", result.removeTagSeconds)) s) |
            """
        print(markdown)
        try output.write(name: cluster ? "redis-state-cluster" : "redis-state", result: result, markdown: markdown)
    }
}
