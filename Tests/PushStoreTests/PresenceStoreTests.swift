import APNsCore
import Foundation
import Redis
import Testing

@testable import PushStore

@Suite("Presence")
struct PresenceStoreTests {
    static func device(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "ab", count: 24) + String(format: "%016x", n))
    }

    @Test func theNewestConnectionHoldsADeviceAndAnOlderOneNeitherRenewsNorReleasesIt() async throws {
        try await withRedis { client async throws in
            let presence = PresenceStore(client: client)
            let older = PresenceRecord(gateway: "gw-a", connection: 1)
            let newer = PresenceRecord(gateway: "gw-b", connection: 7)
            let device = Self.device(1)
            try await presence.apply([PresenceChange(.claim, app: "news", token: device, record: older)], lease: .seconds(30))
            #expect(try await presence.lookup(app: "news", tokens: [device]) == [device: older])
            // The device connects to another gateway; the older connection's heartbeat and end come later.
            try await presence.apply(
                [
                    PresenceChange(.claim, app: "news", token: device, record: newer),
                    PresenceChange(.refresh, app: "news", token: device, record: older),
                    PresenceChange(.release, app: "news", token: device, record: older),
                ], lease: .seconds(30))
            #expect(try await presence.lookup(app: "news", tokens: [device]) == [device: newer])
            // Its own release removes it; apps keep their own presence.
            #expect(try await presence.lookup(app: "shop", tokens: [device]).isEmpty)
            try await presence.apply([PresenceChange(.release, app: "news", token: device, record: newer)], lease: .seconds(30))
            #expect(try await presence.lookup(app: "news", tokens: [device]).isEmpty)
            // A refresh after an expiry (or a lost claim) writes the record again.
            try await presence.apply([PresenceChange(.refresh, app: "news", token: device, record: older)], lease: .seconds(30))
            #expect(try await presence.lookup(app: "news", tokens: [device]) == [device: older])
        }
    }

    @Test func aChunksDevicesAreReadWithOneMGETPerBucketAndRecordsExpireWithTheirLease() async throws {
        try await withRedis { client async throws in
            let presence = PresenceStore(client: client)
            let devices = (0..<1_000).map(Self.device)
            let online = devices.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
            try await presence.apply(
                online.map { PresenceChange(.claim, app: "news", token: $0, record: PresenceRecord(gateway: "gw-a", connection: 5)) },
                lease: .seconds(30))
            let before = try await client.commandCalls("mget")
            let found = try await presence.lookup(app: "news", tokens: devices)
            #expect(Set(found.keys) == Set(online))
            #expect(found.values.allSatisfy { $0 == PresenceRecord(gateway: "gw-a", connection: 5) })
            #expect(try await client.commandCalls("mget") - before == Set(devices.map(PresenceKeyspace.bucket)).count)
            #expect(Set(devices.map(PresenceKeyspace.bucket)).count <= PresenceKeyspace.bucketCount)
            // A record holds for its lease: 30 s here (read back within it on any machine)…
            let held = Self.device(0)
            let ttl = try await client.pttl(PresenceKeyspace.key(app: "news", token: held))
            #expect((1...30_000).contains(ttl))
            // …and goes at its end without a release: a lease of 200 ms, read after 2 s.
            let brief = Self.device(5_000)
            try await presence.apply(
                [PresenceChange(.claim, app: "news", token: brief, record: PresenceRecord(gateway: "gw-a", connection: 9))],
                lease: .milliseconds(200))
            try await Task.sleep(for: .seconds(2))
            #expect(try await presence.lookup(app: "news", tokens: [brief]).isEmpty)
        }
    }

    @Test func anInvalidAppIsRefusedBeforeAnythingIsWritten() async throws {
        try await withRedis { client async throws in
            let presence = PresenceStore(client: client)
            let change = PresenceChange(.claim, app: "bad{app}", token: Self.device(1), record: PresenceRecord(gateway: "g", connection: 1))
            await #expect(throws: StoreError.self) { try await presence.apply([change], lease: .seconds(1)) }
            await #expect(throws: StoreError.self) { _ = try await presence.lookup(app: "", tokens: [Self.device(1)]) }
        }
    }

    @Test("a record's value names its gateway and connection, and reads back", arguments: ["gw-a", "host.example-1", "a b"])
    func recordValue(gateway: String) {
        let record = PresenceRecord(gateway: gateway, connection: 42)
        #expect(PresenceRecord(value: record.value) == record)
        #expect(PresenceRecord(value: "no-number") == nil)
    }

    @Test func theGatewaysCountsOfOnlineDevicesAreSummedWhileFresh() async throws {
        try await withRedis { client async throws in
            let presence = PresenceStore(client: client)
            let now: Int64 = 1_800_000_000_000
            #expect(try await presence.onlineCount(app: "news", now: now) == (0, 0))
            try await presence.recordOnlineCounts(gateway: "gw-a", ["news": 7, "shop": 1], at: now - 1_000)
            try await presence.recordOnlineCounts(gateway: "gw-b", ["news": 5], at: now)
            // gw-c stopped writing long ago: its count is not believed.
            try await presence.recordOnlineCounts(gateway: "gw-c", ["news": 100], at: now - PresenceStore.countFreshness - 1)
            #expect(try await presence.onlineCount(app: "news", now: now) == (12, 2))
            #expect(try await presence.onlineCount(app: "shop", now: now) == (1, 1))
            // A gateway's newer count replaces its older one.
            try await presence.recordOnlineCounts(gateway: "gw-a", ["news": 0], at: now)
            #expect(try await presence.onlineCount(app: "news", now: now) == (5, 2))
        }
    }
}
