import APNsCore
import Foundation
import PushCore
import Redis
import Testing

@testable import PushStore

@Suite("Device locations and area audiences")
struct DeviceLocationTests {
    let app = "places"
    /// Paris; the devices below are placed by their distance east of it.
    static let paris = GeoPoint(latitude: 48.8566, longitude: 2.3522)

    /// A point `kilometres` east of Paris (along its parallel).
    static func east(_ kilometres: Double) -> GeoPoint {
        let degrees = kilometres / (6_371 * Double.pi / 180 * cos(paris.latitude * .pi / 180))
        return GeoPoint(latitude: paris.latitude, longitude: paris.longitude + degrees)
    }

    /// Every device an area job of `area` reaches, read as the expand stage reads it: each of the
    /// 16 area tasks, `count` devices a page. Records an issue when a token comes twice.
    static func areaAudience(
        _ registry: DeviceRegistry, app: String, environment: APNsEnvironment = .production, area: GeoArea,
        filter: ScanFilter = .devices, count: Int = 7, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [DeviceToken: UInt32] {
        var found: [DeviceToken: UInt32] = [:]
        for task in 0..<DeviceRegistry.areaTaskCount {
            let pages = registry.pages(
                app: app, task: ShardTask(shard: task, of: DeviceRegistry.areaTaskCount), environment: environment, filter: filter,
                area: area, pageSize: count)
            for try await page in pages {
                #expect(page.tokens.count == page.ids.count)
                for (token, id) in zip(page.tokens, page.ids) where found.updateValue(id, forKey: token) != nil {
                    Issue.record("\(token.hex) found twice", sourceLocation: sourceLocation)
                }
            }
        }
        return found
    }

    @Test func anAreaReachesTheRegisteredDevicesLocatedInItAndNoOthers() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 3)) { registry, _ in
            // Devices 0..<200, device n located n/10 km east of Paris (0 to 19.9 km); 200..<220 never
            // report; 220..<230 are sandbox devices in the circle; odd devices carry `odd`.
            var devices: [DeviceRegistration] = (0..<230).map { number in
                DeviceRegistration(
                    token: token(number), environment: (220..<230).contains(number) ? .sandbox : .production,
                    tags: number.isMultiple(of: 2) ? [] : ["odd"])
            }
            devices.append(DeviceRegistration(token: token(500), environment: .production))
            try await registry.bind(devices, app: app)
            for number in Array(0..<200) + Array(220..<230) + [500] {
                try await registry.setLocation(app: app, token: token(number), Self.east(Double(number % 200) / 10))
            }
            // Device 500 is unbound: its location goes with it.
            try await registry.unbind(app: app, token: token(500))
            #expect(try await registry.location(app: app, token: token(500)) == nil)

            let area = GeoArea(center: Self.paris, radiusKilometres: 10)
            let found = try await Self.areaAudience(registry, app: app, area: area)
            // Locations are kept to 1 km: a device up to about 0.75 km from the edge may fall either
            // side; those further in are in, those further out are not.
            let surely = Set((0..<93).map(token))
            let possibly = Set((0..<108).map(token))
            #expect(surely.isSubset(of: Set(found.keys)))
            #expect(Set(found.keys).isSubset(of: possibly))
            // Each with its registry id.
            let ids = try await registry.deviceIDs(app: app, tokens: Array(found.keys))
            #expect(ids == Array(found.values).map { Optional($0) })

            let sandbox = try await Self.areaAudience(registry, app: app, environment: .sandbox, area: area)
            #expect(Set(sandbox.keys) == Set((220..<230).map(token)))

            let odd = try await Self.areaAudience(registry, app: app, area: area, filter: .tags(TagExpression(all: ["odd"])))
            #expect(Set(odd.keys) == Set(found.keys.filter { Int($0.hex, radix: 16)! % 2 == 1 }))
            #expect(!odd.isEmpty)

            // The estimate counts the located devices of both environments.
            #expect(try await registry.locatedDevices(app: app, in: area) == found.count + 10)
            #expect(try await registry.locatedDevices(app: app, in: GeoArea(center: GeoPoint(latitude: 0, longitude: 0), radiusKilometres: 50)) == 0)
        }
    }

    @Test func aLocationIsStoredCoarseExpiresAndCanBeForgotten() async throws {
        let day: Int64 = 86_400_000
        // 06:00 on a day.
        let clock = ManualClock(19_700 * day + day / 4)
        let configuration = DeviceRegistryConfiguration(defaultShardCount: 2, locationPrecisionKilometres: 5, locationDays: 2)
        try await withRegistry(configuration: configuration, clock: clock) { registry, client in
            try await registry.bind(app: app, token: token(1), environment: .production)
            try await registry.bind(app: app, token: token(2), environment: .production)
            let exact = GeoPoint(latitude: 48.8566, longitude: 2.3522)
            let stored = try await registry.setLocation(app: app, token: token(1), exact)
            #expect(stored.point == exact.coarsened(toKilometres: 5))
            #expect(stored.point != exact)
            #expect(stored.point.kilometres(to: exact) < 5)
            #expect(stored.expiresAt == 19_703 * day, "the start of the third day after")
            #expect(try await registry.location(app: app, token: token(1)) == stored, "read back as stored")
            #expect(try await registry.location(app: app, token: token(2)) == nil, "never reported")
            // The day's key expires with its locations (Redis's own clock, from now).
            let key = LocationKeyspace(app: app, token: token(1)).points(day: 19_700)
            let ttl = try #require(try await client.send("PTTL", .string(key)).int)
            #expect(abs(ttl - (stored.expiresAt - clock.now)) < 60_000)

            try await registry.setLocation(app: app, token: token(2), exact)
            let area = GeoArea(center: exact, radiusKilometres: 20)
            #expect(Set(try await Self.areaAudience(registry, app: app, area: area).keys) == [token(1), token(2)])

            // Device 2 reports again the next day: it moves to that day's key, once.
            clock.advance(by: day)
            try await registry.setLocation(app: app, token: token(2), exact)
            #expect(try await Self.areaAudience(registry, app: app, area: area).count == 2)
            #expect(try await registry.locatedDevices(app: app, in: area) == 2, "device 2 counted once")
            // Two days later device 1's location is past its days; device 2's is not.
            clock.advance(by: 2 * day)
            #expect(try await registry.location(app: app, token: token(1)) == nil)
            #expect(try await registry.location(app: app, token: token(2))?.expiresAt == 19_704 * day)
            #expect(Set(try await Self.areaAudience(registry, app: app, area: area).keys) == [token(2)])
            #expect(try await registry.locatedDevices(app: app, in: area) == 1)

            // Forgotten: at once, and only once.
            #expect(try await registry.forgetLocation(app: app, token: token(2)))
            #expect(!(try await registry.forgetLocation(app: app, token: token(2))))
            #expect(try await Self.areaAudience(registry, app: app, area: area).isEmpty)
        }
    }

    @Test func badInputIsRefusedNamingItsField() async throws {
        try await withRegistry { registry, _ in
            try await registry.bind(app: app, token: token(1), environment: .production)
            let high = await registryError { try await registry.setLocation(app: app, token: token(1), GeoPoint(latitude: 86, longitude: 0)) }
            #expect(high?.field == "lat")
            let west = await registryError { try await registry.setLocation(app: app, token: token(1), GeoPoint(latitude: 0, longitude: -180.5)) }
            #expect(west?.field == "lon")
            let unknown = await registryError { try await registry.setLocation(app: app, token: token(2), Self.paris) }
            #expect(unknown?.code == .deviceNotRegistered)
            #expect(try await registry.location(app: app, token: token(2)) == nil, "nothing stored for it")
            let task = await registryError {
                try await registry.scanArea(
                    app: app, task: ShardTask(shard: 0, of: 3), environment: .production, area: GeoArea(center: Self.paris, radiusKilometres: 1),
                    cursor: 0, count: 10)
            }
            #expect(task?.field == "shard", "3 does not divide the location buckets")
        }
    }

    @Test func areasSurviveAReshard() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 2)) { registry, _ in
            try await registry.bind((0..<40).map { DeviceRegistration(token: token($0), environment: .production) }, app: app)
            for number in 0..<40 {
                try await registry.setLocation(app: app, token: token(number), Self.east(number < 20 ? 0 : 100))
            }
            let area = GeoArea(center: Self.paris, radiusKilometres: 5)
            let before = try await Self.areaAudience(registry, app: app, area: area)
            #expect(Set(before.keys) == Set((0..<20).map(token)))
            _ = try await registry.reshard(app: app, to: 8)
            let after = try await Self.areaAudience(registry, app: app, area: area)
            #expect(after == before, "the same devices with the same ids")
        }
    }
}
