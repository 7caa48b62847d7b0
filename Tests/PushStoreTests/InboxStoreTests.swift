import APNsCore
import Foundation
import Redis
import Synchronization
import Testing

@testable import PushStore

@Suite("Inboxes of online-only jobs")
struct InboxStoreTests {
    static func device(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "cd", count: 24) + String(format: "%016x", n))
    }

    /// A clock the test moves by hand (ms since 1970).
    final class HandClock: Sendable {
        let now = Atomic<Int64>(1_800_000_000_000)
        func advance(by milliseconds: Int64) { now.add(milliseconds, ordering: .relaxed) }
        var read: @Sendable () -> Int64 { { [self] in now.load(ordering: .relaxed) } }
    }

    @Test func aMessageKeptForADeviceIsPendingUntilRemovedAndRemovedOnce() async throws {
        try await withRedis { client async throws in
            let clock = HandClock()
            let inbox = InboxStore(client: client, clock: clock.read)
            let (device, other) = (Self.device(1), Self.device(2))
            let message = InboxMessage(jobID: "j1", position: 7)
            let expiry = clock.read() + 60_000
            #expect(
                try await inbox.keep(
                    app: "news", [(device, message), (other, InboxMessage(jobID: "j1", position: 8))], expiresAt: expiry, capacity: 5) == 0)
            #expect(try await inbox.pending(app: "news", token: device) == [InboxEntry(message: message, expiresAt: expiry)])
            #expect(try await inbox.pending(app: "shop", token: device).isEmpty)
            // Kept again (a chunk delivered twice): still one entry.
            try await inbox.keep(app: "news", [(device, message)], expiresAt: expiry, capacity: 5)
            #expect(try await inbox.pending(app: "news", token: device).count == 1)
            #expect(try await inbox.remove(app: "news", [(device, message), (other, message)]) == [true, false])
            #expect(try await inbox.remove(app: "news", [(device, message)]) == [false])
            #expect(try await inbox.pending(app: "news", token: device).isEmpty)
            #expect(try await inbox.pending(app: "news", token: other).map(\.message.position) == [8])
        }
    }

    @Test func anInboxHoldsItsCapacityDroppingWhatExpiresFirstAndForgetsWhatExpired() async throws {
        try await withRedis { client async throws in
            let clock = HandClock()
            let inbox = InboxStore(client: client, clock: clock.read)
            let device = Self.device(3)
            let now = clock.read()
            for job in 1...3 {
                try await inbox.keep(
                    app: "news", [(device, InboxMessage(jobID: "j\(job)", position: 0))], expiresAt: now + Int64(job) * 10_000, capacity: 3)
            }
            // A fourth, expiring after all: the one that expires first (j1) makes room.
            let dropped = try await inbox.keep(app: "news", [(device, InboxMessage(jobID: "j4", position: 0))], expiresAt: now + 90_000, capacity: 3)
            #expect(dropped == 1)
            #expect(try await inbox.pending(app: "news", token: device).map(\.message.jobID) == ["j2", "j3", "j4"])
            // Past j2's expiry it is no longer pending, and the key expires with its last entry.
            clock.advance(by: 25_000)
            #expect(try await inbox.pending(app: "news", token: device).map(\.message.jobID) == ["j3", "j4"])
            let key = InboxKeyspace.key(app: "news", token: device)
            let expireAt = try await client.send("PEXPIRETIME", .string(key)).int
            #expect(expireAt == now + 90_000)
            // A message already expired is not kept.
            #expect(
                try await inbox.keep(app: "news", [(Self.device(4), InboxMessage(jobID: "j5", position: 0))], expiresAt: clock.read(), capacity: 3)
                    == 0)
            #expect(try await inbox.pending(app: "news", token: Self.device(4)).isEmpty)
        }
    }

    @Test func aChunksMessagesAreWrittenWithOneScriptPerPresenceBucket() async throws {
        try await withRedis { client async throws in
            let inbox = InboxStore(client: client)
            let devices = (0..<1_000).map(Self.device)
            let messages = devices.enumerated().map { (token: $0.element, message: InboxMessage(jobID: "big", position: UInt32($0.offset))) }
            let buckets = Set(devices.map(PresenceKeyspace.bucket)).count
            // The chunk kept once before counting, so that every node it reaches holds the script: on
            // a Redis Cluster a node's first EVALSHA answers NOSCRIPT and is sent again after the
            // load, which would count the buckets of that node twice. Keeping it again (a chunk
            // delivered twice) writes the same entries with the same number of scripts.
            try await inbox.keep(app: "news", messages, expiresAt: StoreClock.system() + 60_000, capacity: 10)
            let before = try await client.commandCalls("evalsha")
            try await inbox.keep(app: "news", messages, expiresAt: StoreClock.system() + 60_000, capacity: 10)
            #expect(try await client.commandCalls("evalsha") - before == buckets)
            #expect(try await inbox.pending(app: "news", token: devices[999]).map(\.message.position) == [999])
            let removed = try await inbox.remove(app: "news", Array(messages.prefix(500)))
            #expect(removed == Array(repeating: true, count: 500))
        }
    }

    @Test(arguments: ["j1:7", "a:b:12", "x:0"])
    func aMessageIDNamesItsJobAndPosition(id: String) throws {
        let message = try #require(InboxMessage(id: id))
        #expect(message.id == id)
    }

    @Test(arguments: ["j1", ":7", "j1:", "j1:-1", "j1:x", "j1:4294967296"])
    func anIDPushFleetDidNotWriteNamesNoMessage(id: String) {
        #expect(InboxMessage(id: id) == nil)
    }
}
