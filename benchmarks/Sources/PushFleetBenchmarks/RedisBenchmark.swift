import Foundation
import LocalRedis
import Redis
import Spawn

/// Pipelined `SET` and `SADD` throughput through the Redis module, measured against
/// `redis-benchmark` on the same freshly started `redis-server` (or Redis Cluster of 3 masters,
/// `redis-benchmark --cluster`) with the same settings.
///
/// On a cluster both sides do what `redis-benchmark --cluster` does: each connection is bound to
/// a master, in turn, and its keys carry a hash tag of one of that master's slots
/// (`key:{tag}:…`, `myset:{tag}`), so a batch of `pipelineDepth` commands goes to one master.
/// The wrapper's batches still go through ``RedisClusterClient/pipeline(_:)`` (a slot per key,
/// grouped by master). A third measurement, `SET spread`, sends batches whose keys cover every
/// slot: the client splits each over the masters (about a third of the batch each), as a
/// registration's writes are; redis-benchmark has no such mode, so it is set against its `SET`
/// for information.
///
/// Both sides send the same commands as `redis-benchmark -t set,sadd` does by default
/// (`SET key:__rand_int__ xxx`, `SADD myset element:__rand_int__`), `pipelineDepth` commands per
/// batch over `connections` connections (`-c`, `-P`). The wrapper side runs one task per
/// connection through a ``RedisClient`` pool of that size, each sending prebuilt batches with
/// `pipeline(_:)` and checking that no reply is an error. Each round measures both sides back to
/// back; medians over rounds damp noise from other load on the machine. Every workload is
/// measured twice: with the tasks on Swift's global executor, and with the tasks preferring
/// ``RedisEventLoop`` as their executor (`… on the loop`), as `redis-benchmark` runs its clients
/// on the thread that reads their replies.
struct RedisBenchmark {
    /// What to run.
    struct Settings: Sendable {
        /// Commands per measurement (per command type and side).
        var operations = 1_000_000
        /// Commands per pipelined batch (`redis-benchmark -P`).
        var pipelineDepth = 100
        /// Connections (`redis-benchmark -c`) and pool size.
        var connections = 4
        /// Rounds; the median is reported.
        var rounds = 3
        /// The `redis-benchmark` executable; a bare name is looked up in `PATH`.
        var redisBenchmarkPath = "redis-benchmark"
        /// A Redis Cluster of 3 masters (no replicas) instead of one server.
        var cluster = false
    }

    /// Throughput of one command type on both sides.
    struct Measurement: Sendable {
        /// `SET`, `SADD` or `SET spread`.
        var command: String
        /// Operations per second through the Redis module, per round.
        var wrapperRounds: [Double]
        /// Operations per second reported by `redis-benchmark`, per round.
        var redisBenchmarkRounds: [Double]

        var wrapper: Double { Self.median(wrapperRounds) }
        var redisBenchmark: Double { Self.median(redisBenchmarkRounds) }
        /// Wrapper throughput as a fraction of `redis-benchmark`'s: the median of the per-round
        /// ratios, since the two sides of a round run back to back under the same machine load.
        var ratio: Double { Self.median(zip(wrapperRounds, redisBenchmarkRounds).map { $0 / $1 }) }

        private static func median(_ values: [Double]) -> Double { Statistics.median(values) ?? 0 }
    }

    /// The outcome of a run.
    struct Result: Sendable {
        var settings: Settings
        var measurements: [Measurement]

        /// A plain-text table of the medians and every round.
        var table: String {
            var lines = [
                "Redis: \(settings.operations) ops per measurement, pipeline \(settings.pipelineDepth), "
                    + "\(settings.connections) connection(s), median of \(settings.rounds) round(s)",
                pad("command", 8) + pad("wrapper ops/s", 16) + pad("redis-benchmark ops/s", 24) + "ratio",
            ]
            for measurement in measurements {
                lines.append(
                    pad(measurement.command, 8) + pad(format(measurement.wrapper), 16)
                        + pad(format(measurement.redisBenchmark), 24)
                        + String(format: "%.0f%% (median of per-round ratios)", measurement.ratio * 100)
                )
            }
            for measurement in measurements {
                lines.append(
                    "\(measurement.command) rounds: wrapper "
                        + measurement.wrapperRounds.map(format).joined(separator: ", ")
                        + "; redis-benchmark " + measurement.redisBenchmarkRounds.map(format).joined(separator: ", ")
                )
            }
            return lines.joined(separator: "\n")
        }

        private func pad(_ text: String, _ width: Int) -> String {
            text.padding(toLength: max(width, text.count + 1), withPad: " ", startingAt: 0)
        }

        private func format(_ value: Double) -> String {
            String(format: "%.0f", value)
        }
    }

    /// What one measurement sends: each task's batches (task `i` uses `batches[i % count]`,
    /// taking its batches in turn), and the `redis-benchmark` test it is set against.
    struct Workload: Sendable {
        var name: String
        var reference: String
        var batches: [[[[RedisArgument]]]]
        /// Whether the sending tasks prefer ``RedisEventLoop`` as their executor (their
        /// continuations resume on the loop's thread) instead of Swift's global executor.
        var onEventLoop = false
    }

    /// `workloads` as they are, then each again with its tasks on the event loop (named
    /// "… on the loop"): both ways of running the wrapper, set against the same reference.
    static func onBothExecutors(_ workloads: [Workload]) -> [Workload] {
        workloads
            + workloads.map { workload in
                var onLoop = workload
                onLoop.name += " on the loop"
                onLoop.onEventLoop = true
                return onLoop
            }
    }

    /// `redis-benchmark -t set,sadd`'s commands (`SET key:__rand_int__ xxx`, `SADD myset
    /// element:__rand_int__`), `pipelineDepth` to a batch; on a cluster with `tags`, one hash tag
    /// per master, task `i` writes keys tagged `tags[i % tags.count]`, as redis-benchmark's
    /// clients do, and `SET spread` covers every slot.
    static func workloads(pipelineDepth: Int, tags: [String]?) -> [Workload] {
        func batch(_ command: [RedisArgument]) -> [[RedisArgument]] { Array(repeating: command, count: pipelineDepth) }
        guard let tags else {
            return [
                Workload(name: "SET", reference: "SET", batches: [[batch(["SET", "key:__rand_int__", "xxx"])]]),
                Workload(name: "SADD", reference: "SADD", batches: [[batch(["SADD", "myset", "element:__rand_int__"])]]),
            ]
        }
        let spread = (0..<16).map { index in
            (0..<pipelineDepth).map { offset -> [RedisArgument] in ["SET", .string("key:\(index * pipelineDepth + offset)"), "xxx"] }
        }
        return [
            Workload(name: "SET", reference: "SET", batches: tags.map { [batch(["SET", .string("key:{\($0)}:__rand_int__"), "xxx"])] }),
            Workload(name: "SADD", reference: "SADD", batches: tags.map { [batch(["SADD", .string("myset:{\($0)}"), "element:__rand_int__"])] }),
            Workload(name: "SET spread", reference: "SET", batches: [spread]),
        ]
    }

    /// A hash tag for each master of `topology` (the masters in the order of their first slot):
    /// a key with `{tag}` in it lives on that master.
    static func masterTags(_ topology: RedisClusterTopology) -> [String] {
        let shards = topology.shards.filter { $0.master != nil && !$0.slots.isEmpty }
            .sorted { ($0.slots.map(\.lowerBound).min() ?? 0) < ($1.slots.map(\.lowerBound).min() ?? 0) }
        return shards.map { shard in
            var index = 0
            while true {
                let tag = "m\(index)"
                let slot = Int(RedisHashSlot(key: tag).rawValue)
                if shard.slots.contains(where: { $0.contains(slot) }) { return tag }
                index += 1
            }
        }
    }

    /// Starts a `redis-server` (or a cluster), runs the rounds, stops it.
    static func run(_ settings: Settings) async throws -> Result {
        precondition(
            settings.operations % (settings.pipelineDepth * settings.connections) == 0,
            "operations must be a multiple of pipelineDepth × connections")
        if settings.cluster {
            return try await LocalRedisCluster.with(replicasPerMaster: 0) { cluster in
                var configuration = cluster.configuration
                configuration.node.poolSize = settings.connections
                let client = RedisClusterClient(configuration: configuration)
                let seed = cluster.seeds[0]
                guard let shards = try await client.sendToEveryMaster(["CLUSTER", "SHARDS"]).first?.1 else {
                    throw BenchmarkError.failed("the cluster has no master")
                }
                let tags = masterTags(try RedisClusterTopology(clusterShards: shards))
                let result = try await measure(
                    settings, workloads: onBothExecutors(workloads(pipelineDepth: settings.pipelineDepth, tags: tags)), client: client,
                    reference: ["--cluster", "-h", seed.host, "-p", "\(seed.port)"], directory: cluster.nodes[0].server.directory)
                await client.shutdown()
                return result
            }
        }
        let server = try await LocalRedisServer.start()
        do {
            var configuration = server.configuration
            configuration.poolSize = settings.connections
            let client = RedisClient(configuration: configuration)
            let result = try await measure(
                settings, workloads: onBothExecutors(workloads(pipelineDepth: settings.pipelineDepth, tags: nil)), client: client,
                reference: ["-h", server.host, "-p", "\(server.port)"], directory: server.directory)
            await client.shutdown()
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    private static func measure(
        _ settings: Settings, workloads: [Workload], client: any RedisCommands, reference: [String], directory: URL
    ) async throws -> Result {
        for workload in workloads {
            var warmup = settings
            warmup.operations = settings.pipelineDepth * settings.connections * 10
            _ = try await throughput(of: workload, settings: warmup, client: client)
        }

        var measurements = workloads.map { Measurement(command: $0.name, wrapperRounds: [], redisBenchmarkRounds: []) }
        let tests = Array(Set(workloads.map { $0.reference.lowercased() })).sorted()
        for _ in 0..<settings.rounds {
            for (index, workload) in workloads.enumerated() {
                measurements[index].wrapperRounds.append(try await throughput(of: workload, settings: settings, client: client))
            }
            let rates = try await redisBenchmark(settings, tests: tests, target: reference, directory: directory)
            for (index, workload) in workloads.enumerated() {
                guard let opsPerSecond = rates[workload.reference] else {
                    throw BenchmarkError.failed("redis-benchmark reported no \(workload.reference) figure")
                }
                measurements[index].redisBenchmarkRounds.append(opsPerSecond)
            }
        }
        return Result(settings: settings, measurements: measurements)
    }

    /// Operations per second of `workload`, `pipelineDepth` per batch, one task per connection.
    private static func throughput(of workload: Workload, settings: Settings, client: any RedisCommands) async throws -> Double {
        let batchesPerConnection = settings.operations / settings.pipelineDepth / settings.connections
        func check(_ replies: [RedisReply]) throws {
            if let failure = replies.first(where: { $0.errorMessage != nil }) {
                throw BenchmarkError.failed("\(workload.name) failed: \(failure)")
            }
        }
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<settings.connections {
                let batches = workload.batches[task % workload.batches.count]
                group.addTask(executorPreference: workload.onEventLoop ? RedisEventLoop.shared : nil) {
                    if let single = client as? RedisClient {
                        try await single.withConnection { connection in
                            for round in 0..<batchesPerConnection {
                                try check(try await connection.pipeline(batches[round % batches.count]))
                            }
                        }
                    } else {
                        for round in 0..<batchesPerConnection {
                            try check(try await client.pipeline(batches[round % batches.count]))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(settings.operations) / seconds
    }

    /// Runs `redis-benchmark --csv` against `target` (its host and port arguments) and returns
    /// requests per second by test name.
    private static func redisBenchmark(_ settings: Settings, tests: [String], target: [String], directory: URL) async throws -> [String: Double] {
        let output = try OutputFile(path: directory.appendingPathComponent("redis-benchmark-\(UUID().uuidString).csv").path)
        defer { output.remove() }
        let process = try BenchmarkProcess.start(
            settings.redisBenchmarkPath,
            target + [
                "-c", "\(settings.connections)", "-P", "\(settings.pipelineDepth)", "-n", "\(settings.operations)",
                "-t", tests.joined(separator: ","), "--csv",
            ],
            output: .descriptor(output.descriptor), error: .null)
        output.close()
        let status = await process.exited().status
        let csv = output.contents()
        guard status == 0 else {
            throw BenchmarkError.failed("redis-benchmark exited with status \(status): \(csv)")
        }
        // "SET","123456.79",… (redis 7 adds latency columns after the rate).
        var rates: [String: Double] = [:]
        for line in csv.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            if fields.count >= 2, let rate = Double(fields[1]) {
                rates[fields[0]] = rate
            }
        }
        return rates
    }
}
