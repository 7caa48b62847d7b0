import APNsCore
import Foundation
import PushCore
import Redis
import Testing

@testable import PushStore

@Suite("Device time zones and receipt hours")
struct DeviceTimeTests {
    let app = "clocks"
    static let hour: Int64 = 3_600_000

    /// A receipt of `device` at `at` (ms), counted as the API counts one: the app's hour, and the
    /// device's own.
    func receipt(_ client: any RedisCommands, _ device: DeviceToken?, at: Int64) async throws {
        try await HourStatistics(client: client).addReceipt(
            .delivered, app: app, at: Date(timeIntervalSince1970: Double(at) / 1000), in: TimeZone(identifier: "UTC")!, device: device)
    }

    @Test func aTimeZoneIsKeptFromBindToBindAndGoesWithTheDevice() async throws {
        try await withRegistry { registry, client in
            try await registry.bind(app: app, token: token(1), environment: .production, timeZone: "Europe/Paris")
            try await registry.bind(app: app, token: token(2), environment: .production)
            #expect(try await registry.deviceTime(app: app, token: token(1)).timeZone == "Europe/Paris")
            #expect(try await registry.deviceTime(app: app, token: token(2)).timeZone == nil)

            // A bind that names none keeps the zone; one that names another replaces it.
            try await registry.bind(app: app, token: token(1), environment: .production, tags: ["a"])
            #expect(try await registry.deviceTime(app: app, token: token(1)).timeZone == "Europe/Paris")
            try await registry.bind(app: app, token: token(1), environment: .production, timeZone: "Asia/Kolkata")
            #expect(try await registry.deviceTime(app: app, token: token(1)).timeZone == "Asia/Kolkata")

            // Bulk binds carry zones too.
            try await registry.bind(
                (10..<20).map { DeviceRegistration(token: token($0), environment: .sandbox, timeZone: $0 < 15 ? "America/New_York" : nil) },
                app: app)
            for number in 10..<20 {
                #expect(try await registry.deviceTime(app: app, token: token(number)).timeZone == (number < 15 ? "America/New_York" : nil))
            }

            try await receipt(client, token(1), at: 7 * Self.hour)
            try await registry.unbind(app: app, token: token(1))
            #expect(try await registry.deviceTime(app: app, token: token(1)) == DeviceTime(timeZone: nil, receiptHours: ReceiptHours(bytes: [])))
        }
    }

    @Test func theZonesOfManyDevicesAreReadBucketByBucketBesideTheirHours() async throws {
        try await withRegistry { registry, client in
            let zones = ["Europe/Paris", "America/Chicago", nil, "Asia/Tokyo"]
            let devices = (0..<200).map { DeviceRegistration(token: token($0), environment: .sandbox, timeZone: zones[$0 % 4]) }
            try await registry.bind(devices, app: app)
            // Receipt hours beside the zones: the bucket holds both kinds of field.
            for number in stride(from: 0, to: 200, by: 3) {
                try await receipt(client, token(number), at: 5 * Self.hour)
            }
            let tokens = (0..<210).map(token)
            let held = try await registry.bucketsHoldingZones(app: app)
            #expect(!held.isEmpty && held.count <= 150, "the buckets of the 150 devices with a zone")
            let read = try await registry.timeZones(app: app, tokens: tokens, held: held)
            #expect(read == (0..<210).map { $0 < 200 ? zones[$0 % 4] : nil })
            #expect(try await registry.timeZones(app: app, tokens: [], held: held) == [])
            #expect(try await registry.bucketsHoldingZones(app: "no-zones").isEmpty)
            // A send's reads: zones and hours in one pipeline, from the buckets that hold any.
            let times = try await registry.deviceTimes(app: app, tokens: tokens, hours: true, held: try await registry.heldTimeBuckets(app: app))
            #expect(times.map(\.timeZone) == read)
            #expect(times.map { $0.receiptHours.counts[5] } == (0..<210).map { $0 < 200 && $0.isMultiple(of: 3) ? 1 : 0 })
            let zonesOnly = try await registry.deviceTimes(app: app, tokens: tokens, hours: false, held: try await registry.heldTimeBuckets(app: app))
            #expect(zonesOnly.map(\.timeZone) == read && zonesOnly.allSatisfy { $0.receiptHours.total == 0 })
        }
    }

    @Test func aNameOutsideTheTimeZoneDatabaseIsRefusedAndNothingIsBound() async throws {
        try await withRegistry { registry, _ in
            for name in ["Mars/Olympus", "GMT+5", "UTC+1", "europe/paris", ""] {
                let error = try await #require(throws: StoreError.self) {
                    try await registry.bind(app: app, token: token(3), environment: .production, timeZone: name)
                }
                #expect(error.field == "timeZone", "\(name)")
            }
            let bulk = try await #require(throws: StoreError.self) {
                try await registry.bind(
                    [
                        DeviceRegistration(token: token(4), environment: .production, timeZone: "UTC"),
                        DeviceRegistration(token: token(5), environment: .production, timeZone: "Nowhere"),
                    ], app: app)
            }
            #expect(bulk.field == "devices[1].timeZone")
            #expect(try await registry.device(app: app, token: token(3)) == nil)
            #expect(try await registry.device(app: app, token: token(4)) == nil)
        }
    }

    @Test func receiptsCountIntoTheirUTCHourAndTheBestHourNeedsThree() async throws {
        try await withRegistry { registry, client in
            try await registry.bind(app: app, token: token(1), environment: .production, timeZone: "Asia/Tokyo")
            let day: Int64 = 20_000 * 24 * Self.hour
            // 07:10 and 07:50 UTC, then 21:05 UTC: two receipts are too few for a best hour.
            try await receipt(client, token(1), at: day + 7 * Self.hour + 600_000)
            try await receipt(client, token(1), at: day + 7 * Self.hour + 3_000_000)
            var hours = try await registry.deviceTime(app: app, token: token(1)).receiptHours
            #expect(hours.counts[7] == 2 && hours.total == 2 && hours.bestHour == nil)
            try await receipt(client, token(1), at: day + 21 * Self.hour + 300_000)
            hours = try await registry.deviceTime(app: app, token: token(1)).receiptHours
            #expect(hours.counts[21] == 1 && hours.total == 3 && hours.bestHour == 7)
            // Without a device, a receipt counts for the app's hours alone.
            try await receipt(client, nil, at: day + 9 * Self.hour)
            #expect(try await registry.deviceTime(app: app, token: token(1)).receiptHours == hours)

        }
    }

    @Test func anHourThatWouldPass255HalvesEveryHour() async throws {
        try await withRegistry { registry, client in
            try await registry.bind(app: app, token: token(1), environment: .production)
            for _ in 0..<255 {
                try await receipt(client, token(1), at: 5 * Self.hour)
            }
            for _ in 0..<3 {
                try await receipt(client, token(1), at: 6 * Self.hour)
            }
            var hours = try await registry.deviceTime(app: app, token: token(1)).receiptHours
            #expect(hours.counts[5] == 255 && hours.counts[6] == 3)
            try await receipt(client, token(1), at: 5 * Self.hour)
            hours = try await registry.deviceTime(app: app, token: token(1)).receiptHours
            #expect(hours.counts[5] == 128 && hours.counts[6] == 1 && hours.total == 129)
        }
    }
}
