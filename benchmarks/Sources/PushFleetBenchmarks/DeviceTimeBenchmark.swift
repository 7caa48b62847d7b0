import APNsCore
import ArgumentParser
import EmbeddedStack
import Foundation
import Kafka
import Logging
import PushCore
import PushJobs
import PushStore
import Redis

/// What sends at each device's own time cost: `N` devices registered (sandbox), a third each in
/// Tokyo, New York and the app's zone, each with 3 receipts at a UTC hour 1 to 23 hours ahead
/// (so that every notification waits); then a best-hour broadcast expanded by a `pushfleet
/// worker` process, beside a broadcast's scan of the same devices in the same run (the
/// reference). Measured: the expansion's rate, the worker's resident memory before the job and
/// at its peak (a worker holds a page and one open chunk per slot and task, whatever the
/// audience), Redis's memory per parked notification and per device's zone and hours.
struct DeviceTimeBenchmark {
    struct Result: Codable, Sendable {
        var devices: Int
        var broadcastScanSeconds: Double
        /// The scan with each page's zones and hours read, in the benchmark process.
        var readsSeconds: Double
        var expansionSeconds: Double
        var parkedNotifications: Int
        var slots: Int
        var bytesPerParkedNotification: Double
        var bytesPerDeviceTime: Double
        var workerRSSBeforeMegabytes: Double
        var workerPeakRSSMegabytes: Double
    }

    static let app = EmbeddedStack.app
    static let zones: [String?] = ["Asia/Tokyo", "America/New_York", nil]

    let devices: Int
    let pushfleet: String
    let workerLogLevel: String

    func run() async throws -> Result {
        let logger = Logger(label: "bench.device-times")
        let stack = try await EmbeddedStack.start(EmbeddedStack.Options(), logger: logger)
        let fleet = WorkerFleet(binary: pushfleet, stack: stack, logLevel: workerLogLevel)
        return try await CampaignHarness.withClients(stack: stack, fleet: fleet, logger: logger) { producer, redis in
            let result = try await measure(stack: stack, fleet: fleet, producer: producer, redis: redis)
            fleet.stopAll()
            return result
        }
    }

    private func measure(stack: EmbeddedStack, fleet: WorkerFleet, producer: KafkaProducer, redis: any RedisCommands) async throws -> Result {
        let registry = stack.makeRegistry(redis)
        let hours = HourStatistics(client: redis)
        let clock = ContinuousClock()
        let shards = stack.options.registryShards
        print("registering \(devices) devices")
        try await CampaignHarness.register(devices, shards: shards, redis: redis)
        let beforeTimes = try await ResourceUsage.redisUsedMemory(redis)
        let devices = self.devices
        for start in stride(from: 0, to: devices, by: 50_000) {
            try await registry.bind(
                (start..<min(start + 50_000, devices)).compactMap { n in
                    Self.zones[n % 3].map { DeviceRegistration(token: CampaignHarness.token(n), environment: .sandbox, timeZone: $0) }
                }, app: Self.app)
        }
        // Every device reads at a UTC hour of its own, 1 to 23 hours ahead (3 receipts each).
        let now = StoreClock.system()
        print("counting 3 receipts per device")
        try await withThrowingTaskGroup(of: Void.self) { group in
            let lanes = 32
            for lane in 0..<lanes {
                group.addTask {
                    for n in stride(from: lane, to: devices, by: lanes) {
                        let at = Date(timeIntervalSince1970: Double(now + Int64(1 + n % 23) * 3_600_000) / 1000)
                        for _ in 0..<3 {
                            try await hours.addReceipt(
                                .delivered, app: Self.app, at: at, in: TimeZone(identifier: "UTC")!, device: CampaignHarness.token(n))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let afterTimes = try await ResourceUsage.redisUsedMemory(redis)

        // The reference: a broadcast's scan of every shard task, as the expand stage reads it.
        let tasks = try await registry.layout(app: Self.app).taskCount
        let scanStart = clock.now
        var scanned = 0
        for shard in 0..<tasks {
            for try await page in registry.pages(app: Self.app, task: ShardTask(shard: shard, of: tasks), environment: .sandbox, pageSize: 1_000) {
                scanned += page.tokens.count
            }
        }
        let broadcastScanSeconds = (clock.now - scanStart).seconds
        guard scanned == devices else { throw BenchmarkError.failed("the broadcast scan found \(scanned) devices, not \(devices)") }

        // The same scan with each page's zones and hours read, as the expand stage reads them:
        // what of the expansion's time is reads.
        let readsStart = clock.now
        var withHours = 0
        for shard in 0..<tasks {
            let held = try await registry.heldTimeBuckets(app: Self.app)
            for try await page in registry.pages(app: Self.app, task: ShardTask(shard: shard, of: tasks), environment: .sandbox, pageSize: 1_000) {
                let times = try await registry.deviceTimes(app: Self.app, tokens: page.tokens, hours: true, held: held)
                withHours += times.filter { $0.receiptHours.total >= ReceiptHours.minimumReceipts }.count
            }
        }
        let readsSeconds = (clock.now - readsStart).seconds
        guard withHours == devices else { throw BenchmarkError.failed("\(withHours) devices read with their hours, not \(devices)") }

        try fleet.start(1)
        guard let worker = fleet.runningIdentifiers.first else { throw BenchmarkError.failed("no worker process runs") }
        try await fleet.awaitSettled(CampaignHarness.groupPartitions(stack))
        try await CampaignHarness.warmUp(producer: producer, redis: redis)
        let rssBefore = ResourceUsage.memoryKilobytes(worker, field: "VmRSS")
        let beforeParking = try await ResourceUsage.redisUsedMemory(redis)
        let jobs = JobStore(client: redis)
        let jobID = "bench-best-hour"
        print("publishing a best-hour broadcast")
        let expansionStart = clock.now
        var job = PushJob(
            id: jobID, app: Self.app, environment: .sandbox, audience: .broadcast,
            notification: APNsPayload(["aps": ["alert": "Good morning"]]), headers: PushHeaders(pushType: .alert))
        job.sendAtDevice = .bestHour(withinHours: 24)
        try await CampaignHarness.publish(job, producer: producer)
        var report = JobReport(jobID: jobID, counters: [:])
        while !report.expansionComplete {
            try await Task.sleep(for: .milliseconds(100))
            report = JobReport(jobID: jobID, counters: try await jobs.statistics(jobID: jobID))
        }
        let expansionSeconds = (clock.now - expansionStart).seconds
        let peak = ResourceUsage.memoryKilobytes(worker, field: "VmHWM")
        let afterParking = try await ResourceUsage.redisUsedMemory(redis)
        let parked = report.sendTimes.reduce(0) { $0 + $1.scheduled }
        guard parked == devices else {
            throw BenchmarkError.failed("\(parked) notifications parked, not \(devices): every device's best hour is ahead")
        }
        return Result(
            devices: devices, broadcastScanSeconds: broadcastScanSeconds, readsSeconds: readsSeconds, expansionSeconds: expansionSeconds,
            parkedNotifications: parked,
            slots: report.sendTimes.count, bytesPerParkedNotification: Double(afterParking - beforeParking) / Double(max(parked, 1)),
            bytesPerDeviceTime: Double(afterTimes - beforeTimes) / Double(devices), workerRSSBeforeMegabytes: Double(rssBefore) / 1024,
            workerPeakRSSMegabytes: Double(peak) / 1024)
    }
}

struct DeviceTimeBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device-times",
        abstract:
            "Sends at each device's own time: a worker's best-hour broadcast expansion beside a broadcast's scan; memory per parked notification, the worker's peak."
    )

    @Option(help: "Devices registered.") var devices = 1_000_000
    @Option(help: "The pushfleet binary (build it in release mode).") var pushfleet = ".build/release/pushfleet"
    @Option(help: "Log level of the worker process (its standard error).") var workerLogLevel = "warning"
    @OptionGroup var output: ResultOptions

    func run() async throws {
        let result = try await DeviceTimeBenchmark(devices: devices, pushfleet: pushfleet, workerLogLevel: workerLogLevel).run()
        let megabytes = { (value: Double) in String(format: "%.1f MB", value) }
        let markdown = """
            \(result.devices) devices registered, a third each in Asia/Tokyo, America/New_York and the app's zone (UTC), each with 3 receipts at a UTC hour 1 to 23 hours ahead; one redis-server; one `pushfleet worker` process expands a best-hour broadcast (`send-at: {"best-hour": {"within": "24h"}}`) until its report says the expansion is complete.

            | figure | value |
            |---|---:|
            | Redis memory per device for its time zone and receipt hours | \(String(format: "%.1f", result.bytesPerDeviceTime)) bytes |
            | a broadcast's scan of every shard task in the benchmark process (the reference) | \(Int(Double(result.devices) / result.broadcastScanSeconds)) devices/s (\(String(format: "%.2f", result.broadcastScanSeconds)) s) |
            | the same scan with each page's zones and hours read (`deviceTimes`), in the benchmark process | \(Int(Double(result.devices) / result.readsSeconds)) devices/s (\(String(format: "%.2f", result.readsSeconds)) s), \(String(format: "%.0f%%", result.broadcastScanSeconds / result.readsSeconds * 100)) of the scan's rate |
            | the worker's best-hour expansion: scan, zones and hours read, planned, parked | \(Int(Double(result.devices) / result.expansionSeconds)) devices/s (\(String(format: "%.2f", result.expansionSeconds)) s), \(String(format: "%.0f%%", result.broadcastScanSeconds / result.expansionSeconds * 100)) of the scan's rate |
            | notifications parked, in slots | \(result.parkedNotifications) in \(result.slots) |
            | Redis memory per parked notification | \(String(format: "%.1f", result.bytesPerParkedNotification)) bytes |
            | the worker's resident memory before the job, and its peak | \(megabytes(result.workerRSSBeforeMegabytes)), \(megabytes(result.workerPeakRSSMegabytes)) |
            """
        try output.write(name: "device-times", result: result, markdown: markdown)
    }
}
