import APNsCore
import ArgumentParser
import EmbeddedStack
import Foundation
import Logging
import PushCore
import PushStore
import Redis

/// What area audiences cost: `N` devices registered and located over a region about 780 × 670 km
/// (latitudes 43–49, longitudes −1–7), then the expansion's reads of an area job, as the expand
/// stage runs them (each of the 16 area tasks, 1,000 devices a page), beside a broadcast's scan
/// of the same devices in the same run (every shard task): an area covering every device, and a
/// city's 30 km circle. Also the rate at which devices' location reports are recorded
/// (``DeviceRegistry/setLocation(app:token:_:)``, 32 at a time) and Redis's memory per located
/// device. The stack is ``EmbeddedStack``'s one `redis-server`.
struct LocationBenchmark {
    struct Result: Codable, Sendable {
        var devices: Int
        var reportsPerSecond: Double
        var bytesPerLocation: Double
        var broadcastScanSeconds: Double
        var wholeAreaSeconds: Double
        var wholeAreaDevices: Int
        var cityDevices: Int
        var citySeconds: Double
    }

    static let app = EmbeddedStack.app

    /// Device `n`'s point: a low-discrepancy walk over the region, so the devices cover it evenly.
    static func point(_ n: Int) -> GeoPoint {
        let u = (Double(n) * 0.618_033_988_749_895).truncatingRemainder(dividingBy: 1)
        let v = (Double(n) * 0.754_877_666_246_692_7).truncatingRemainder(dividingBy: 1)
        return GeoPoint(latitude: 43 + 6 * u, longitude: -1 + 8 * v)
    }

    static func run(devices: Int) async throws -> Result {
        let stack = try await EmbeddedStack.start(EmbeddedStack.Options(), logger: Logger(label: "bench.locations"))
        do {
            let result = try await measure(devices: devices, client: stack.makeRedisClient(logger: Logger(label: "bench.locations.redis")))
            await stack.stop()
            return result
        } catch {
            await stack.stop()
            throw error
        }
    }

    private static func measure(devices: Int, client: any RedisCommands) async throws -> Result {
        let registry = DeviceRegistry(client: client)
        let clock = ContinuousClock()
        let tokens = (0..<devices).map(StateBenchmark.token)
        for start in stride(from: 0, to: devices, by: 50_000) {
            try await registry.bind(
                tokens[start..<min(start + 50_000, devices)].map { DeviceRegistration(token: $0, environment: .production) }, app: app)
        }

        let before = try await ResourceUsage.redisUsedMemory(client)
        let reportsStart = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            let lanes = 32
            for lane in 0..<lanes {
                group.addTask {
                    for n in stride(from: lane, to: devices, by: lanes) {
                        try await registry.setLocation(app: app, token: tokens[n], point(n))
                    }
                }
            }
            try await group.waitForAll()
        }
        let reportsSeconds = (clock.now - reportsStart).seconds
        let after = try await ResourceUsage.redisUsedMemory(client)

        let scanStart = clock.now
        let everyone = try await broadcastScan(registry)
        let broadcastScanSeconds = (clock.now - scanStart).seconds
        guard everyone == devices else { throw BenchmarkError.failed("the broadcast scan found \(everyone) devices, not \(devices)") }

        let whole = GeoArea(center: GeoPoint(latitude: 46, longitude: 3), radiusKilometres: 700)
        let wholeStart = clock.now
        let wholeDevices = try await areaScan(registry, whole)
        let wholeSeconds = (clock.now - wholeStart).seconds
        guard wholeDevices == devices else { throw BenchmarkError.failed("the area covering every device found \(wholeDevices), not \(devices)") }

        let city = GeoArea(center: GeoPoint(latitude: 45.76, longitude: 4.84), radiusKilometres: 30)
        let cityStart = clock.now
        let cityDevices = try await areaScan(registry, city)
        let citySeconds = (clock.now - cityStart).seconds
        let expected = (0..<devices).count { city.contains(point($0)) }
        // Locations are kept to 1 km: a device near the edge may fall either side.
        guard abs(cityDevices - expected) <= max(expected / 20, 5) else {
            throw BenchmarkError.failed("the city's circle found \(cityDevices) devices, about \(expected) expected")
        }
        return Result(
            devices: devices, reportsPerSecond: Double(devices) / reportsSeconds, bytesPerLocation: Double(after - before) / Double(devices),
            broadcastScanSeconds: broadcastScanSeconds, wholeAreaSeconds: wholeSeconds, wholeAreaDevices: wholeDevices,
            cityDevices: cityDevices, citySeconds: citySeconds)
    }

    private static func broadcastScan(_ registry: DeviceRegistry) async throws -> Int {
        let tasks = try await registry.layout(app: app).taskCount
        var found = 0
        for shard in 0..<tasks {
            for try await page in registry.pages(app: app, task: ShardTask(shard: shard, of: tasks), environment: .production, pageSize: 1_000) {
                found += page.tokens.count
            }
        }
        return found
    }

    private static func areaScan(_ registry: DeviceRegistry, _ area: GeoArea) async throws -> Int {
        let tasks = DeviceRegistry.areaTaskCount
        var found = 0
        for task in 0..<tasks {
            for try await page in registry.pages(
                app: app, task: ShardTask(shard: task, of: tasks), environment: .production, area: area, pageSize: 1_000)
            {
                found += page.tokens.count
            }
        }
        return found
    }
}

struct LocationBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "locations",
        abstract: "Area audiences: location reports recorded per second, memory per location, an area's expansion beside a broadcast's scan.")

    @Option(help: "Devices registered and located.") var devices = 1_000_000
    @OptionGroup var output: ResultOptions

    func run() async throws {
        let result = try await LocationBenchmark.run(devices: devices)
        func rate(_ count: Int, _ seconds: Double) -> String { "\(Int(Double(count) / seconds)) devices/s (\(String(format: "%.2f", seconds)) s)" }
        let markdown = """
            \(result.devices) devices registered and located over a region of about 780 × 670 km; one redis-server.

            | figure | value |
            |---|---:|
            | location reports recorded (`setLocation`, 32 at a time) | \(Int(result.reportsPerSecond)) reports/s |
            | Redis memory per located device | \(String(format: "%.1f", result.bytesPerLocation)) bytes |
            | a broadcast's scan of every shard task (the reference) | \(rate(result.devices, result.broadcastScanSeconds)) |
            | an area job's expansion reads, the area covering every device | \(rate(result.wholeAreaDevices, result.wholeAreaSeconds)), \(String(format: "%.0f%%", result.broadcastScanSeconds / result.wholeAreaSeconds * 100)) of the broadcast scan's rate |
            | an area job's expansion reads, a 30 km circle (\(result.cityDevices) devices) | \(String(format: "%.3f", result.citySeconds)) s, \(String(format: "%.1f%%", result.citySeconds / result.broadcastScanSeconds * 100)) of the broadcast scan's time |
            """
        try output.write(name: "locations", result: result, markdown: markdown)
    }
}
