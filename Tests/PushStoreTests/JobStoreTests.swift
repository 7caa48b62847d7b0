import APNsCore
import Redis
import Testing

@testable import PushStore

@Suite("Job store")
struct JobStoreTests {
    let job = "job-1"

    @Test func specIsStoredOnceWithItsTimeToLive() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client, specTimeToLive: .seconds(60))
            #expect(try await store.spec(jobID: job) == nil)
            #expect(try await store.saveSpec(jobID: job, json: utf8(#"{"v":1}"#)))
            #expect(try await store.saveSpec(jobID: job, json: utf8(#"{"v":2}"#)) == false)
            #expect(try await store.spec(jobID: job) == utf8(#"{"v":1}"#))
            let ttl = try await client.pttl(JobKeyspace(jobID: job).spec)
            #expect(ttl > 0 && ttl <= 60_000)
        }
    }

    @Test func namesAreReadTogetherAndJobsWithoutOneAreLeftOut() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            try await store.saveSpec(jobID: "a", json: utf8(#"{"app":"news","name":"Spring sale"}"#))
            try await store.saveSpec(jobID: "b", json: utf8(#"{"app":"news"}"#))
            try await store.saveSpec(jobID: "c", json: [0xFF, 0x00])
            #expect(try await store.names(jobIDs: ["a", "b", "c", "gone"]) == ["a": "Spring sale"])
            #expect(try await store.names(jobIDs: []) == [:])
        }
    }

    @Test func specIsBinarySafe() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            let bytes: [UInt8] = [0, 13, 10, 255, 123, 125]
            try await store.saveSpec(jobID: job, json: bytes)
            #expect(try await store.spec(jobID: job) == bytes)
        }
    }

    @Test func chunksCountOncePerChunkID() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            #expect(try await store.expandedTokens(jobID: job) == 0)
            #expect(try await store.recordChunk(jobID: job, chunkID: "shard-0:0", tokenCount: 100))
            #expect(try await store.recordChunk(jobID: job, chunkID: "shard-0:0", tokenCount: 100) == false)
            #expect(try await store.recordChunk(jobID: job, chunkID: "shard-1:0", tokenCount: 50))
            #expect(try await store.statistics(jobID: job) == ["chunks": 2, "expanded": 150])
            #expect(try await store.expandedTokens(jobID: job) == 150)
        }
    }

    @Test func incrementSkipsZeroesAndSetOverwrites() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            try await store.increment(jobID: job, [.targeted: 10, .removed: 0])
            try await store.increment(jobID: job, [.targeted: 5, .unknownOpenIDs: 2])
            try await store.increment(jobID: job, [:])
            try await store.increment(jobID: "other", [.removed: 0])
            #expect(try await store.statistics(jobID: job) == ["targeted": 15, "unknown-openids": 2])
            #expect(try await client.send("EXISTS", .string(JobKeyspace(jobID: "other").stats)).int == 0)

            try await store.set(jobID: job, [.expansionComplete: 1, .targeted: 3])
            try await store.set(jobID: job, [:])
            #expect(try await store.statistics(jobID: job) == ["targeted": 3, "unknown-openids": 2, "expansion-complete": 1])
            #expect(try await store.statistics(jobID: "unknown").isEmpty)
        }
    }

    @Test("setOnce keeps the first value, for every caller and at once, with the job's TTL")
    func setOnceKeepsTheFirstValue() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client, specTimeToLive: .seconds(60))
            #expect(try await store.setOnce(jobID: job, .timedFrom, to: 1_000) == 1_000)
            #expect(try await store.setOnce(jobID: job, .timedFrom, to: 2_000) == 1_000)
            let ttl = try await client.pttl(JobKeyspace(jobID: job).stats)
            #expect(ttl > 0 && ttl <= 60_000)
            // Twenty workers at the same moment, each with its own clock: one start for all.
            let answers = try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<20 {
                    group.addTask { try await store.setOnce(jobID: "at-once", .shards, to: 100 + worker) }
                }
                return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
            }
            #expect(answers.count == 1)
            #expect(try await store.ownCounters(jobID: "at-once") == ["shards": try #require(answers.first)])
        }
    }

    @Test("ownCounters reads the job's own hash, without its sent ranges' outcome counters")
    func ownCountersLeaveOutTheSentRanges() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            try await store.set(jobID: job, [.expansionComplete: 1, .shards: 4])
            _ = try await store.recordOutcomes(
                jobID: job,
                [
                    DeliveryOutcomeRecord(position: UInt32(1), counter: .accepted, countsAsSent: true),
                    DeliveryOutcomeRecord(position: UInt32(70_000), counter: .accepted, countsAsSent: true),
                ])
            #expect(try await store.ownCounters(jobID: job) == ["expansion-complete": 1, "shards": 4])
            #expect(try await store.statistics(jobID: job) == ["expansion-complete": 1, "shards": 4, "accepted": 2, "sent": 2])
            #expect(try await store.ownCounters(jobID: "unknown").isEmpty)
        }
    }

    @Test func outcomesCountEachTokenOnceAndTheFirstWins() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            let first = try await store.recordOutcomes(
                jobID: job,
                [
                    DeliveryOutcomeRecord(position: UInt32(1), counter: .accepted, countsAsSent: true),
                    DeliveryOutcomeRecord(position: UInt32(2), counter: .accepted, countsAsSent: true),
                    DeliveryOutcomeRecord(position: UInt32(3), counter: .failed(reason: "BadTopic"), countsAsSent: true),
                    DeliveryOutcomeRecord(position: UInt32(4), counter: .deadLettered, countsAsSent: false),
                    DeliveryOutcomeRecord(position: UInt32(1), counter: .failed(reason: "BadDeviceToken"), countsAsSent: true),
                ]
            )
            #expect(first == 4)
            #expect(
                try await store.statistics(jobID: job)
                    == ["accepted": 2, "failed:BadTopic": 1, "dead-lettered": 1, "sent": 3]
            )

            // A redelivered batch: token 2 already has its marker, token 5 is new.
            let second = try await store.recordOutcomes(
                jobID: job,
                [
                    DeliveryOutcomeRecord(position: UInt32(2), counter: .accepted, countsAsSent: true),
                    DeliveryOutcomeRecord(position: UInt32(5), counter: .accepted, countsAsSent: true),
                ]
            )
            #expect(second == 1)
            #expect(try await store.statistics(jobID: job)["accepted"] == 3)
            #expect(try await store.statistics(jobID: job)["sent"] == 4)
            #expect(try await store.recordOutcomes(jobID: job, []) == 0)

            #expect(try await store.hasMarkers(jobID: job, positions: [5, 6, 1, 4]) == [true, false, true, true])
            #expect(try await store.hasMarkers(jobID: "other", positions: [1]) == [false])
            #expect(try await store.hasMarkers(jobID: job, positions: []) == [])
        }
    }

    @Test func hasMarkersKeepsOrderAcrossRanges() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            // Positions spread over seven ranges of 65,536, asked for in a shuffled order.
            let positions: [UInt32] = (0..<2_500).map { (n: Int) -> UInt32 in UInt32(n * 97 + (n % 4) * 65_536) }.shuffled()
            let marked = positions.enumerated().filter { $0.offset.isMultiple(of: 3) }.map(\.element)
            try await store.recordOutcomes(jobID: job, marked.map { DeliveryOutcomeRecord(position: $0, counter: .accepted, countsAsSent: true) })
            let flags = try await store.hasMarkers(jobID: job, positions: positions)
            #expect(flags == positions.indices.map { $0.isMultiple(of: 3) })
            #expect(try await store.statistics(jobID: job) == ["accepted": marked.count, "sent": marked.count])
            let ranges = try await client.members(JobKeyspace(jobID: job).ranges)
            #expect(ranges == Set(marked.map { String($0 / 65_536) }))
            #expect(ranges.count == 7)
        }
    }

    @Test func aThousandOutcomesAreOneEvalsha() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            // Loads the script on the job's server (its SHA-1 may be remembered from another
            // server; in a cluster, from another node).
            try await store.recordOutcomes(jobID: job, [DeliveryOutcomeRecord(position: UInt32(0), counter: .accepted, countsAsSent: true)])
            let before = try await client.evalshaCalls()
            let outcomes = (1...1_000).map { DeliveryOutcomeRecord(position: UInt32($0), counter: .accepted, countsAsSent: true) }
            #expect(try await store.recordOutcomes(jobID: job, outcomes) == 1_000)
            #expect(try await client.evalshaCalls() - before == 1)
            #expect(try await store.statistics(jobID: job) == ["accepted": 1_001, "sent": 1_001])
        }
    }

    @Test func everyKeyOfAJobGetsTheTimeToLive() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client, specTimeToLive: .seconds(90))
            let keys = JobKeyspace(jobID: job)
            try await store.recordChunk(jobID: job, chunkID: "c", tokenCount: 1)
            #expect(try await client.pttl(keys.chunks) > 0)
            _ = try await client.send("PERSIST", .string(keys.stats))
            try await store.increment(jobID: job, [.targeted: 1])
            #expect(try await client.pttl(keys.stats) > 0)
            _ = try await client.send("PERSIST", .string(keys.stats))
            try await store.set(jobID: job, [.expansionComplete: 1])
            #expect(try await client.pttl(keys.stats) > 0)
            _ = try await client.send("PERSIST", .string(keys.stats))
            try await store.recordOutcomes(jobID: job, [DeliveryOutcomeRecord(position: UInt32(1), counter: .accepted, countsAsSent: true)])
            let range = SentRangeKeyspace(jobID: job, range: 0)
            for key in [keys.ranges, range.sent, range.stats, keys.chunks] {
                let ttl = try await client.pttl(key)
                #expect(ttl > 0 && ttl <= 90_000, "\(key)")
            }
        }
    }

    @Test func aResendTallyCountsOnceHoweverOftenItIsApplied() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client, specTimeToLive: .seconds(90))
            let keys = JobKeyspace(jobID: job)
            let tally = ResendTally(id: "tally-1", jobID: job, counters: [.online: 5, .accepted: 2])
            // Its completer and a drainer that found it left behind, at once.
            async let first = store.apply(tally)
            async let second = store.apply(tally)
            let applied = try await [first, second]
            #expect(applied.sorted { !$0 && $1 } == [false, true])
            #expect(try await store.apply(tally) == false)
            try await store.apply(ResendTally(id: "tally-2", jobID: job, counters: [.online: 1]))
            let counters = try await store.statistics(jobID: job)
            #expect(counters["online"] == 6 && counters["accepted"] == 2)
            for key in [keys.stats, keys.appliedTallies] {
                let ttl = try await client.pttl(key)
                #expect(ttl > 0 && ttl <= 90_000, "\(key)")
            }
        }
    }

    @Test func concurrentWritersCountEachTokenOnce() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            let other = JobStore(client: client)
            // Two workers report overlapping batches (a redelivery racing the original).
            async let a = store.recordOutcomes(
                jobID: job,
                (0..<600).map { DeliveryOutcomeRecord(position: UInt32($0), counter: .accepted, countsAsSent: true) }
            )
            async let b = other.recordOutcomes(
                jobID: job,
                (300..<900).map { DeliveryOutcomeRecord(position: UInt32($0), counter: .retried, countsAsSent: false) }
            )
            let (newA, newB) = try await (a, b)
            #expect(newA + newB == 900)
            let statistics = try await store.statistics(jobID: job)
            #expect((statistics["accepted"] ?? 0) + (statistics["retried"] ?? 0) == 900)
            #expect(statistics["accepted"] == newA)
            #expect(statistics["sent"] == newA)
            let bitmap = RedisArgument.string(SentRangeKeyspace(jobID: job, range: 0).sent)
            #expect(try await client.send("BITCOUNT", bitmap, "0", "8191").int == 900, "one marker per position")
            #expect(
                try await client.send("BITCOUNT", bitmap, "8192", "16383").int == 300,
                "a refused bit for each position B's worker retried and A's never accepted")
            #expect(try await store.wasAccepted(jobID: job, positions: (0..<900).map { UInt32($0) }).filter { $0 }.count == 600)
        }
    }

    @Test func aMillionPositionsTakeAboutABitEachSpreadOverSlots() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            let count = 1_000_000
            for start in stride(from: 0, to: count, by: 10_000) {
                try await store.recordOutcomes(
                    jobID: job,
                    (start..<start + 10_000).map { DeliveryOutcomeRecord(position: UInt32($0), counter: .accepted, countsAsSent: true) }
                )
            }
            let ranges = (0...(count - 1) / SentRangeKeyspace.positions).map { SentRangeKeyspace(jobID: job, range: $0) }
            var bytes = 0
            var slots = Set<RedisHashSlot>()
            for range in ranges {
                let size = try await client.memoryUsage(range.sent)
                // 8 KiB of markers (and as much of refused bits where an outcome is refused).
                #expect(size < 4 * 8_192 + 256, "no key holds more than a range's bitmaps")
                bytes += size + (try await client.memoryUsage(range.stats))
                slots.insert(RedisHashSlot(key: range.sent))
            }
            #expect(ranges.count == 16)
            #expect(slots.count == ranges.count, "each range in its own slot")
            // A bit per position (every outcome accepted: no refused bits), plus each range's
            // counters: well under a byte per token.
            #expect(Double(bytes) / Double(count) < 0.5)
            #expect(try await store.statistics(jobID: job) == ["accepted": count, "sent": count])
        }
    }

    @Test func aJobWhoseIDLooksLikeAnotherJobsRangeSharesNoKey() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            // Job "a"'s range 1 and job "a:1" (ids may hold ':').
            try await store.recordOutcomes(jobID: "a", [DeliveryOutcomeRecord(position: 65_536 + 5, counter: .accepted, countsAsSent: true)])
            try await store.recordOutcomes(
                jobID: "a:1", [DeliveryOutcomeRecord(position: 5, counter: .failed(reason: "BadTopic"), countsAsSent: true)])
            try await store.increment(jobID: "a:1", [.targeted: 1])
            #expect(try await store.statistics(jobID: "a") == ["accepted": 1, "sent": 1])
            #expect(try await store.statistics(jobID: "a:1") == ["failed:BadTopic": 1, "sent": 1, "targeted": 1])
            #expect(try await store.hasMarkers(jobID: "a:1", positions: [5, 65_541]) == [true, false])
            #expect(try await store.hasMarkers(jobID: "a", positions: [5, 65_541]) == [false, true])
        }
    }

    @Test func invalidArgumentsNameTheirField() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            for bad in ["", "a{b", "a}b", String(repeating: "j", count: 129), "line\nbreak"] {
                #expect(await registryError { try await store.saveSpec(jobID: bad, json: []) }?.field == "jobID")
                #expect(await registryError { try await store.statistics(jobID: bad) }?.field == "jobID")
            }
            #expect(await registryError { try await store.recordChunk(jobID: job, chunkID: "", tokenCount: 1) }?.field == "chunkID")
            #expect(await registryError { try await store.recordChunk(jobID: job, chunkID: "c", tokenCount: -1) }?.field == "tokenCount")
            #expect(await registryError { try await store.increment(jobID: job, [.failed(reason: "bell\u{7}"): 1]) }?.field == "counters")
            let outcomes = [
                DeliveryOutcomeRecord(position: UInt32(1), counter: .accepted, countsAsSent: true),
                DeliveryOutcomeRecord(position: UInt32(2), counter: .failed(reason: "bell\u{7}"), countsAsSent: true),
            ]
            #expect(await registryError { try await store.recordOutcomes(jobID: job, outcomes) }?.field == "outcomes[1].counter")
            #expect(await registryError { try await store.saveSpec(jobID: "", json: []) }?.code == StoreError.Code.invalidArgument)
            // Nothing of the refused calls was written.
            #expect(try await store.statistics(jobID: job).isEmpty)
        }
    }

    @Test func aChunkLeaseHasOneHolderUntilReleasedAndExpiresOnItsOwn() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            let key = JobKeyspace(jobID: job).lease(chunkID: "s3-0")
            #expect(try await store.leaseChunk(jobID: job, chunkID: "s3-0", holder: "a", for: .seconds(5)))
            #expect(try await store.leaseChunk(jobID: job, chunkID: "s3-0", holder: "b", for: .seconds(5)) == false)
            // Another chunk of the job, and the same chunk id of another job, are separate leases.
            #expect(try await store.leaseChunk(jobID: job, chunkID: "s3-1", holder: "b", for: .seconds(5)))
            #expect(try await store.leaseChunk(jobID: "job-2", chunkID: "s3-0", holder: "b", for: .seconds(5)))
            let first = try await client.pttl(key)
            #expect(first > 0 && first <= 5_000)
            // The holder extends its lease; the TTL is what it asked for now.
            #expect(try await store.leaseChunk(jobID: job, chunkID: "s3-0", holder: "a", for: .seconds(60)))
            #expect(try await client.pttl(key) > 5_000)
            // Only the holder releases it.
            #expect(try await store.releaseChunk(jobID: job, chunkID: "s3-0", holder: "b") == false)
            #expect(try await store.leaseChunk(jobID: job, chunkID: "s3-0", holder: "b", for: .seconds(5)) == false)
            #expect(try await store.releaseChunk(jobID: job, chunkID: "s3-0", holder: "a"))
            #expect(try await store.releaseChunk(jobID: job, chunkID: "s3-0", holder: "a") == false)
            #expect(try await store.leaseChunk(jobID: job, chunkID: "s3-0", holder: "b", for: .seconds(5)))
        }
    }

    @Test func chunkLeaseArgumentsAreChecked() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            #expect(await registryError { try await store.leaseChunk(jobID: "", chunkID: "c", holder: "a", for: .seconds(1)) }?.field == "jobID")
            #expect(await registryError { try await store.leaseChunk(jobID: job, chunkID: "", holder: "a", for: .seconds(1)) }?.field == "chunkID")
            #expect(await registryError { try await store.leaseChunk(jobID: job, chunkID: "c", holder: "", for: .seconds(1)) }?.field == "holder")
            #expect(await registryError { try await store.leaseChunk(jobID: job, chunkID: "c", holder: "a", for: .zero) }?.field == "duration")
            #expect(await registryError { try await store.releaseChunk(jobID: job, chunkID: "c", holder: "") }?.field == "holder")
            #expect(try await client.pttl(JobKeyspace(jobID: job).lease(chunkID: "c")) == -2)
        }
    }
}

/// A 32-byte token with well-spread bits (like real tokens), distinct for every `number`.
func bigToken(_ number: Int) -> DeviceToken {
    var state = UInt64(truncatingIfNeeded: number) &+ 0x9E37_79B9_7F4A_7C15
    var hex = ""
    for _ in 0..<4 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        var mixed = state ^ (state >> 29)
        mixed = mixed &* 0xBF58_476D_1CE4_E5B9
        let digits = String(mixed, radix: 16)
        hex += String(repeating: "0", count: 16 - digits.count) + digits
    }
    return try! DeviceToken(hex: hex)
}
