import APNsCore
import EmbeddedStack
import Foundation
import LocalRedis
import Logging
import PushStore
import Redis

/// What PushFleet's state costs in Redis and how fast a registry fills: `N` devices imported
/// by `pushfleet devices import` from a CSV file (32-byte tokens, one tag, no openid: the figure
/// the key model is judged by), then a broadcast's scan of them (every shard task, as the expand
/// stage reads them) and the job's `N` sent outcomes at their ids recorded through
/// ``JobStore``; Redis's `used_memory` (summed over the masters of a cluster) before and after
/// each. The import rate is set beside `redis-benchmark`'s pipelined `HSET` rate against the
/// same server or cluster in the same run (the machine's raw write rate), and beside
/// ``DeviceRegistry/bind(_:app:)`` called in-process (the registry without the file and the
/// process around it). Then the app-wide walks an operator runs: `pushfleet devices export` of
/// every device and `pushfleet devices remove-tag` of the tag every device carries. The stack is
/// ``EmbeddedStack``'s, with its configuration file.
struct StateBenchmark {
    struct Settings: Sendable {
        var devices = 1_000_000
        /// A Redis Cluster of 3 masters instead of one server.
        var cluster = false
        /// Devices handed to one in-process ``DeviceRegistry/bind(_:app:)`` call.
        var importBatch = 50_000
        var pushfleetPath = ".build/release/pushfleet"
        var redisBenchmarkPath = "redis-benchmark"
    }

    struct Result: Codable, Sendable {
        var devices: Int
        var backend: String
        /// `pushfleet devices import` of the CSV file, process start to exit.
        var importSeconds: Double
        var importPerSecond: Double
        /// CPU (user + system) per imported device: the `pushfleet` process's, and Redis's
        /// (`used_cpu_*` of the server, or of every master), in microseconds. Less noisy than the
        /// rate on a machine whose speed drifts: an interpreter's work, not a wait.
        var importProcessCPUMicrosecondsPerDevice: Double?
        var importRedisCPUMicrosecondsPerDevice: Double?
        /// ``DeviceRegistry/bind(_:app:)`` in-process, the same devices under another app.
        var bindPerSecond: Double
        var redisBenchmarkHSETPerSecond: Double
        /// Redis's CPU per `HSET` of the reference, in microseconds: what a device's import costs
        /// Redis, counted in pipelined `HSET`s, holds on a machine whose speed drifts.
        var redisBenchmarkRedisCPUMicrosecondsPerHSET: Double?
        var registryBytes: Int
        var bytesPerDevice: Double
        var scanSeconds: Double
        var outcomesSeconds: Double
        var sentStateBytes: Int
        var bytesPerSentToken: Double
        /// The keys of the job's sent state, and the largest one's share of the job's tokens.
        var sentStateKeys: Int
        var largestSentKeyShare: Double
        /// `pushfleet devices export --output F`, process start to exit.
        var exportSeconds: Double
        /// `pushfleet devices remove-tag` of the tag every device carries, process start to exit.
        var removeTagSeconds: Double
    }

    static let app = EmbeddedStack.app
    static let bindApp = EmbeddedStack.otherApp
    static let jobID = "bench-job"

    static func token(_ n: Int) -> DeviceToken {
        // Random-looking bytes, as APNs's tokens are: 8 bytes of a mixed counter, repeated.
        let digits = Array("0123456789abcdef".utf8)
        var value = UInt64(n) &* 0x9E37_79B9_7F4A_7C15
        value ^= value >> 29
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for _ in 0..<4 {
            for shift in stride(from: 60, through: 0, by: -4) {
                hex.append(digits[Int((value >> UInt64(shift)) & 0xF)])
            }
            value = value &* 0xBF58_476D_1CE4_E5B9 &+ 1
        }
        return try! DeviceToken(hex: String(decoding: hex, as: UTF8.self))
    }

    static func run(_ settings: Settings) async throws -> Result {
        var options = EmbeddedStack.Options()
        if settings.cluster {
            options.redisClusterMasters = 3
            options.redisReplicas = 0
        }
        let stack = try await EmbeddedStack.start(options, logger: Logger(label: "bench.state"))
        let client = stack.makeRedisClient(logger: Logger(label: "bench.state.redis"))
        do {
            let reference: [String]
            let backend: String
            if let cluster = stack.redisCluster {
                reference = ["--cluster", "-h", cluster.seeds[0].host, "-p", "\(cluster.seeds[0].port)"]
                backend = "Redis Cluster, 3 masters"
            } else {
                let server = stack.redisServer!
                reference = ["-h", server.host, "-p", "\(server.port)"]
                backend = "one redis-server"
            }
            let result = try await measure(settings, stack: stack, client: client, backend: backend) { count in
                try await referenceRate(settings, arguments: reference, count: count)
            }
            await stack.stop()
            return result
        } catch {
            await stack.stop()
            throw error
        }
    }

    private static func measure(
        _ settings: Settings, stack: EmbeddedStack, client: any RedisCommands, backend: String, reference: (Int) async throws -> Double
    ) async throws -> Result {
        // The import stores the app's layout (the stack's shard count), which wins over this default.
        let registry = DeviceRegistry(client: client)
        let jobs = JobStore(client: client)
        let clock = ContinuousClock()

        // The CSV file, written before anything is measured.
        let file = stack.directory.appendingPathComponent("devices.csv")
        FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        for start in stride(from: 0, to: settings.devices, by: 100_000) {
            var text = ""
            for n in start..<min(start + 100_000, settings.devices) {
                text += token(n).hex + ",production,,all\n"
            }
            handle.write(Data(text.utf8))
        }
        try handle.close()

        let before = try await ResourceUsage.redisUsedMemory(client)
        let redisCPUBefore = try await redisCPUSeconds(client)
        let childrenCPUBefore = ResourceUsage.childrenCPUSeconds()
        let importSeconds = try timedDevicesCommand(settings, stack, ["import", "--json", file.path]) {
            $0.standardOutput.contains("\"imported\":\(settings.devices)")
        }
        let importProcessCPU = ResourceUsage.childrenCPUSeconds() - childrenCPUBefore
        let importRedisCPU = try await redisCPUSeconds(client) - redisCPUBefore
        let afterImport = try await ResourceUsage.redisUsedMemory(client)
        guard try await registry.deviceCount(app: app).total == settings.devices else {
            throw BenchmarkError.failed("the registry does not hold \(settings.devices) devices")
        }

        let scanStart = clock.now
        let ids = try await scan(registry)
        let scanSeconds = (clock.now - scanStart).seconds
        guard ids.count == settings.devices, Set(ids).count == settings.devices else {
            throw BenchmarkError.failed("the broadcast scan found \(ids.count) devices (\(Set(ids).count) ids), not \(settings.devices)")
        }

        let outcomesStart = clock.now
        try await recordOutcomes(jobs, positions: ids)
        let outcomesSeconds = (clock.now - outcomesStart).seconds
        let afterOutcomes = try await ResourceUsage.redisUsedMemory(client)
        let (keys, largest) = try await sentKeys(client)

        // The registry alone: the same devices bound in-process under the other app.
        var bindSeconds = 0.0
        for start in stride(from: 0, to: settings.devices, by: settings.importBatch) {
            let devices = (start..<min(start + settings.importBatch, settings.devices)).map {
                DeviceRegistration(token: token($0), environment: .production, openID: nil, tags: ["all"])
            }
            let bindStart = clock.now
            try await registry.bind(devices, app: bindApp)
            bindSeconds += (clock.now - bindStart).seconds
        }
        // The app-wide walks: every device exported, then the tag every device carries removed.
        let exported = stack.directory.appendingPathComponent("export.jsonl")
        let exportSeconds = try timedDevicesCommand(settings, stack, ["export", "--output", exported.path]) {
            $0.standardError.contains("exported \(settings.devices) devices")
        }
        try? FileManager.default.removeItem(at: exported)
        let removeTagSeconds = try timedDevicesCommand(settings, stack, ["remove-tag", "all", "--json"]) {
            $0.standardOutput.contains("\"devices\":\(settings.devices)")
        }

        let hsetCPUBefore = try await redisCPUSeconds(client)
        let hset = try await reference(settings.devices)
        let hsetRedisCPU = try await redisCPUSeconds(client) - hsetCPUBefore
        return Result(
            devices: settings.devices, backend: backend, importSeconds: importSeconds,
            importPerSecond: Double(settings.devices) / importSeconds,
            importProcessCPUMicrosecondsPerDevice: importProcessCPU * 1e6 / Double(settings.devices),
            importRedisCPUMicrosecondsPerDevice: importRedisCPU * 1e6 / Double(settings.devices),
            bindPerSecond: Double(settings.devices) / bindSeconds,
            redisBenchmarkHSETPerSecond: hset, redisBenchmarkRedisCPUMicrosecondsPerHSET: hsetRedisCPU * 1e6 / Double(settings.devices),
            registryBytes: afterImport - before, bytesPerDevice: Double(afterImport - before) / Double(settings.devices),
            scanSeconds: scanSeconds, outcomesSeconds: outcomesSeconds, sentStateBytes: afterOutcomes - afterImport,
            bytesPerSentToken: Double(afterOutcomes - afterImport) / Double(settings.devices), sentStateKeys: keys,
            largestSentKeyShare: Double(largest) / Double(settings.devices), exportSeconds: exportSeconds, removeTagSeconds: removeTagSeconds)
    }

    /// Redis's CPU seconds so far (user + system), summed over a cluster's masters.
    private static func redisCPUSeconds(_ client: any RedisCommands) async throws -> Double {
        let cpu = try await ResourceUsage.redisInfo(client, section: "cpu")
        return (cpu["used_cpu_user"] ?? 0) + (cpu["used_cpu_sys"] ?? 0)
    }

    /// Runs `pushfleet devices <arguments> --app <app> --config <stack's>` and returns its
    /// seconds from process start to exit; fails unless it exits 0 and `succeeded` holds.
    private static func timedDevicesCommand(
        _ settings: Settings, _ stack: EmbeddedStack, _ arguments: [String], succeeded: (BenchmarkProcess.Output) -> Bool
    ) throws -> Double {
        let run = try BenchmarkProcess.run(
            settings.pushfleetPath, ["devices"] + arguments + ["--app", app, "--config", stack.configurationPath])
        guard run.status == 0, succeeded(run) else {
            throw BenchmarkError.failed(
                "pushfleet devices \(arguments[0]) exited \(run.status): \(run.standardOutput.suffix(2_000)) \(run.standardError.suffix(2_000))")
        }
        return run.elapsed.seconds
    }

    /// The ids of every production device, shard task by shard task, 1,000 per page.
    private static func scan(_ registry: DeviceRegistry) async throws -> [UInt32] {
        let tasks = try await registry.layout(app: app).taskCount
        var ids: [UInt32] = []
        for shard in 0..<tasks {
            var cursor: UInt64 = 0
            repeat {
                let page = try await registry.scanShard(
                    app: app, task: ShardTask(shard: shard, of: tasks), environment: .production, cursor: cursor, count: 1_000)
                ids += page.ids
                cursor = page.cursor
            } while cursor != 0
        }
        return ids
    }

    /// Records an accepted outcome at each of `positions` for one job, 1,000 per call, four
    /// calls at a time.
    private static func recordOutcomes(_ jobs: JobStore, positions: [UInt32]) async throws {
        let calls = stride(from: 0, to: positions.count, by: 1_000).map { Array(positions[$0..<min($0 + 1_000, positions.count)]) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var pending = calls.makeIterator()
            func startNext() {
                guard let batch = pending.next() else { return }
                group.addTask {
                    _ = try await jobs.recordOutcomes(
                        jobID: jobID, batch.map { DeliveryOutcomeRecord(position: $0, counter: .accepted, countsAsSent: true) })
                }
            }
            for _ in 0..<4 { startNext() }
            while try await group.next() != nil { startNext() }
        }
    }

    /// The job's sent-state keys (`pf:{sent:<job>:<range>}:sent`) and the most tokens one of them holds.
    private static func sentKeys(_ client: any RedisCommands) async throws -> (count: Int, largest: Int) {
        let pattern: [RedisArgument] = ["KEYS", .string("pf:{sent:\(jobID):*}:sent")]
        let answers: [RedisReply]
        if let cluster = client as? RedisClusterClient {
            answers = try await cluster.sendToEveryMaster(pattern).map(\.1)
        } else {
            answers = [try await client.send(pattern)]
        }
        let keys = answers.flatMap { $0.array?.compactMap(\.string) ?? [] }
        var largest = 0
        for key in keys {
            let type = try await client.send("TYPE", .string(key)).string
            let size = try await client.send(type == "set" ? "SCARD" : "BITCOUNT", .string(key)).int ?? 0
            largest = max(largest, Int(size))
        }
        return (keys.count, largest)
    }

    /// `redis-benchmark -t hset -P 100 -c 8 -n count` against the same server or cluster.
    private static func referenceRate(_ settings: Settings, arguments: [String], count: Int) async throws -> Double {
        let run = try BenchmarkProcess.run(
            settings.redisBenchmarkPath, arguments + ["-t", "hset", "-P", "100", "-c", "8", "-n", "\(count)", "-r", "\(count)", "--csv", "-q"])
        for line in run.standardOutput.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            if fields.count >= 2, fields[0].uppercased().hasPrefix("HSET"), let rate = Double(fields[1]) {
                return rate
            }
        }
        throw BenchmarkError.failed("redis-benchmark reported no HSET figure: \(run.standardOutput.prefix(300))")
    }
}
