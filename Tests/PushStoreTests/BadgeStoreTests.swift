import Foundation
import PushCore
import Redis
import Testing

@testable import PushStore

@Suite("Kept badges")
struct BadgeStoreTests {
    @Test func aJobCountsEachDeviceOnceWhateverTimesItIsApplied() async throws {
        try await withRedis { client async throws in
            let badges = BadgeStore(client: client)
            // Devices in three ranges, one listed twice.
            let devices: [UInt32] = [7, 65_535, 65_536, 2_147_483_648 + 1_024, 7]
            let first = try await badges.apply(.increment(1), app: "news", jobID: "a", devices: devices)
            #expect(first.map(\.badge) == [1, 1, 1, 1, 1])
            #expect(first.map(\.counted) == [true, true, true, true, false], "a device listed twice counts once")
            // The same job again (a chunk sent again after a crash): nothing counts twice.
            #expect(try await badges.apply(.increment(1), app: "news", jobID: "a", devices: devices).map(\.badge) == [1, 1, 1, 1, 1])
            // Another job counts on; one device had its badge set meanwhile.
            try await badges.set(app: "news", device: 65_536, to: 10)
            #expect(try await badges.apply(.increment(3), app: "news", jobID: "b", devices: [7, 65_536, 8]).map(\.badge) == [4, 13, 3])
            #expect(try await badges.badge(app: "news", device: 7) == 4)
            #expect(try await badges.badge(app: "news", device: 9) == 0, "never counted")
            // A set rule makes it the number, once: later changes stand when it is applied again.
            #expect(try await badges.apply(.set(0), app: "news", jobID: "c", devices: [7, 7]).map(\.badge) == [0, 0])
            try await badges.set(app: "news", device: 7, to: 2)
            #expect(try await badges.apply(.set(0), app: "news", jobID: "c", devices: [7]).map(\.badge) == [2])
            // Apps keep their own badges.
            #expect(try await badges.badge(app: "other", device: 7) == 0)
        }
    }

    @Test func whatAJobCountedAndDidNotSendIsTakenBack() async throws {
        try await withRedis { client async throws in
            let badges = BadgeStore(client: client)
            try await badges.set(app: "news", device: 1, to: 3)
            _ = try await badges.apply(.increment(2), app: "news", jobID: "a", devices: [1, 2, 70_000])
            // Its chunk stopped before devices 2 and 70,000 were sent to; 9 was never counted.
            #expect(try await badges.revoke(.increment(2), app: "news", jobID: "a", devices: [2, 70_000, 9]) == 2)
            #expect(try await badges.badge(app: "news", device: 2) == 0)
            #expect(try await badges.badge(app: "news", device: 70_000) == 0)
            #expect(try await badges.badge(app: "news", device: 1) == 5)
            // Sent later (the job resumed), they count again, once.
            let again = try await badges.apply(.increment(2), app: "news", jobID: "a", devices: [1, 2])
            #expect(again == [.init(badge: 5, counted: false), .init(badge: 2, counted: true)])
            // A number the app set meanwhile is not taken below 0; a set rule's number stays.
            try await badges.set(app: "news", device: 2, to: 1)
            #expect(try await badges.revoke(.increment(2), app: "news", jobID: "a", devices: [2]) == 1)
            #expect(try await badges.badge(app: "news", device: 2) == 0)
            _ = try await badges.apply(.set(7), app: "news", jobID: "b", devices: [3])
            #expect(try await badges.revoke(.set(7), app: "news", jobID: "b", devices: [3]) == 1)
            #expect(try await badges.badge(app: "news", device: 3) == 7)
            #expect(try await badges.apply(.set(7), app: "news", jobID: "b", devices: [3]) == [.init(badge: 7, counted: true)])
        }
    }

    @Test func countsStopAtTheLargestBadge() async throws {
        try await withRedis { client async throws in
            let badges = BadgeStore(client: client)
            try await badges.set(app: "news", device: 1, to: BadgeRule.maxValue - 1)
            #expect(try await badges.apply(.increment(5), app: "news", jobID: "a", devices: [1]).map(\.badge) == [BadgeRule.maxValue])
        }
    }

    @Test func moreDevicesThanOneScriptCallTakes() async throws {
        try await withRedis { client async throws in
            let badges = BadgeStore(client: client)
            let devices = (0..<UInt32(2_000)).map { $0 * 3 }
            let numbers = try await badges.apply(.increment(2), app: "news", jobID: "a", devices: devices).map(\.badge)
            #expect(numbers == Array(repeating: 2, count: devices.count))
            #expect(try await badges.apply(.increment(2), app: "news", jobID: "a", devices: devices).map(\.badge) == numbers)
        }
    }

    @Test func theJobsMarkersExpireWithItsKeysTheBadgesStay() async throws {
        try await withRedis { client async throws in
            let badges = BadgeStore(client: client, markerTimeToLive: .seconds(60))
            _ = try await badges.apply(.increment(1), app: "news", jobID: "a", devices: [3])
            let keys = BadgeRangeKeyspace(app: "news", range: 0)
            let markerTTL = try await client.send(["PTTL", .string(keys.counted(jobID: "a"))]).int ?? -3
            #expect((1...60_000).contains(markerTTL))
            #expect(try await client.send(["PTTL", .string(keys.counts)]).int == -1)
        }
    }

    @Test func badInputIsRefusedNamingTheField() async throws {
        try await withRedis { client async throws in
            let badges = BadgeStore(client: client)
            await #expect(throws: StoreError.self) { try await badges.set(app: "news", device: 1, to: 65_536) }
            await #expect(throws: StoreError.self) { try await badges.set(app: "news", device: 1, to: -1) }
            await #expect(throws: StoreError.self) { try await badges.apply(.increment(1), app: "", jobID: "a", devices: [1]) }
            let error = #expect(throws: StoreError.self) { try BadgeStore.validate(70_000) }
            #expect(error?.field == "badge")
        }
    }
}
