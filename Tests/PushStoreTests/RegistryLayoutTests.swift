import APNsCore
import Testing

@testable import PushStore

/// The pure rules of the registry's key model: where a token lives, what a shard task reads,
/// how a layout may grow, and the packed device record.
@Suite("Registry layout and packed records")
struct RegistryLayoutTests {
    @Test func aStaleLayoutIsReadAgainAfter5msDoublingTo400ms() {
        let waits = (0..<DeviceRegistry.layoutAttempts).map { DeviceRegistry.layoutWait($0) }
        #expect(Array(waits.prefix(8)) == [5, 10, 20, 40, 80, 160, 320, 400].map { Duration.milliseconds($0) })
        #expect(waits.dropFirst(7).allSatisfy { $0 == .milliseconds(400) })
        #expect(waits.reduce(.zero, +) < .seconds(8))
    }

    @Test func aBulkBindLinesDevicesUpShardByShardKeepingTheirOrderWithinAShard() {
        let layout = RegistryLayout(shards: 64)
        // Token 7 listed three times among 5,000: its entries must stay in their order.
        var tokens = (0..<5_000).map(token)
        tokens[1_000] = token(7)
        tokens[4_000] = token(7)
        let order = layout.indicesByHome(tokens)
        #expect(order.sorted() == Array(tokens.indices), "every index once")
        let homes = order.map { layout.home(of: tokens[$0]) }
        #expect(homes == homes.sorted(), "shard by shard")
        for shard in 0..<64 {
            let indices = order.filter { layout.home(of: tokens[$0]) == shard }
            #expect(indices == indices.sorted(), "shard \(shard) in the given order")
        }
        #expect(order.filter { tokens[$0] == token(7) } == [7, 1_000, 4_000])
        #expect(RegistryLayout(shards: 1).indicesByHome(tokens) == Array(tokens.indices))
        #expect(layout.indicesByHome([]) == [])
    }

    @Test func aTokensChildrenAreItsShardsChildren() {
        let before = RegistryLayout(shards: 8)
        let during = RegistryLayout(shards: 32, epoch: 1, migratingFrom: 8)
        for number in 0..<2_000 {
            let sample = token(number)
            let home = during.home(of: sample)
            #expect(home % 8 == before.home(of: sample), "a device moves only to a child of its shard")
            if home == before.home(of: sample) {
                #expect(during.previousHome(of: sample) == nil)
            } else {
                #expect(during.previousHome(of: sample) == before.home(of: sample))
            }
            #expect(before.previousHome(of: sample) == nil)
        }
    }

    @Test func tasksReadOldShardsFirstWhileResharding() throws {
        let settled = RegistryLayout(shards: 16, epoch: 2)
        #expect(settled.taskCount == 16)
        #expect(try settled.shardsOfTask(3, of: 16) == ([3], []))
        // A job planned with 4 tasks before a reshard to 16 finished reads its shards together.
        #expect(try settled.shardsOfTask(1, of: 4) == ([1, 5, 9, 13], []))

        let during = RegistryLayout(shards: 16, epoch: 3, migratingFrom: 4)
        #expect(during.taskCount == 4)
        #expect(try during.shardsOfTask(1, of: 4) == ([1], [5, 9, 13]))
        #expect(try during.shardsOfTask(0, of: 2) == ([0, 2], [4, 6, 8, 10, 12, 14]))
        // Every shard is read by exactly one task.
        var covered: [Int] = []
        for task in 0..<4 {
            let (first, then) = try during.shardsOfTask(task, of: 4)
            covered += first + then
        }
        #expect(covered.sorted() == Array(0..<16))

        #expect(throws: StoreError.self) { try during.shardsOfTask(4, of: 4) }
        #expect(throws: StoreError.self) { try during.shardsOfTask(0, of: 8) }
        #expect(throws: StoreError.self) { try settled.shardsOfTask(0, of: 3) }
        #expect(throws: StoreError.self) { try settled.shardsOfTask(0, of: 0) }
    }

    @Test func growthIsToAMultipleUpTo1024() throws {
        try RegistryLayout.checkGrowth(from: 16, to: 32)
        try RegistryLayout.checkGrowth(from: 16, to: 256)
        try RegistryLayout.checkGrowth(from: 3, to: 9)
        for (current, target) in [(16, 16), (16, 8), (16, 24), (16, 4_096), (1_024, 3_072)] {
            #expect(throws: StoreError.self, "\(current) → \(target)") { try RegistryLayout.checkGrowth(from: current, to: target) }
            do {
                try RegistryLayout.checkGrowth(from: current, to: target)
            } catch {
                #expect(error.field == "shards")
            }
        }
    }

    @Test func idsOfANewEpochStartAboveTheOldOnes() throws {
        // Sequential: shard s hands out base + (sequence - 1) × shards + s, below base + highest × shards.
        let legacy = RegistryLayout(shards: 16, epoch: 1, ids: .sequential, idBase: 1_000)
        // Its ids stay below 2³¹, so the next epoch is bucketed, from offset 0.
        #expect(try legacy.nextIDs(highestSequence: 500) == (.bucketed, 0))
        let huge = RegistryLayout(shards: 1_024, ids: .sequential, idBase: UInt32(DeviceIDForm.offsetLimit) - 1_000)
        #expect(try huge.nextIDs(highestSequence: 10) == (.sequential, UInt32(DeviceIDForm.offsetLimit) - 1_000 + 10_240))
        let full = RegistryLayout(shards: 1_024, ids: .sequential, idBase: UInt32.max - 2_000_000)
        #expect(throws: StoreError.self) { try full.nextIDs(highestSequence: 1_000) }

        // Bucketed: past the layers the epoch opened (a bucket's 90th device is in layer 3, 64 slots after 56).
        let bucketed = RegistryLayout(shards: 16, epoch: 2, idBase: 4_096)
        #expect(try bucketed.nextIDs(highestSequence: 90) == (.bucketed, 4_096 + 16 * 1_024 * (56 + 64)))
        #expect(try bucketed.nextIDs(highestSequence: 0) == (.bucketed, 4_096))
        let crowded = RegistryLayout(shards: 1_024, epoch: 9, idBase: UInt32(DeviceIDForm.offsetLimit) - 12_000_000)
        #expect(throws: StoreError.self) { try crowded.nextIDs(highestSequence: 1) }
    }

    @Test func bucketedIDsFillLayersOfDoublingSlots() {
        #expect(DeviceIDForm.layer(holding: 1) == (0, 8))
        #expect(DeviceIDForm.layer(holding: 8) == (0, 8))
        #expect(DeviceIDForm.layer(holding: 9) == (8, 16))
        #expect(DeviceIDForm.layer(holding: 25) == (24, 32))
        #expect(DeviceIDForm.offset(sequence: 1, bucket: 0, shard: 0, shards: 16) == 0)
        #expect(DeviceIDForm.offset(sequence: 8, bucket: 0, shard: 0, shards: 16) == 7)
        #expect(DeviceIDForm.offset(sequence: 1, bucket: 1, shard: 0, shards: 16) == 8, "a shard's buckets side by side")
        #expect(DeviceIDForm.offset(sequence: 1, bucket: 0, shard: 1, shards: 16) == 1_024 * 8)
        #expect(DeviceIDForm.offset(sequence: 9, bucket: 0, shard: 0, shards: 16) == 16 * 1_024 * 8, "layer 1 after every layer-0 slot")
        #expect(DeviceIDForm.extent(highestSequence: 8, shards: 16) == 16 * 1_024 * 8)
        #expect(DeviceIDForm.extent(highestSequence: 9, shards: 16) == 16 * 1_024 * 24)
        #expect(DeviceIDForm.extent(highestSequence: 0, shards: 16) == 0)

        // Every (shard, bucket, sequence) has an id of its own, inside the extent.
        var seen = Set<Int>()
        for shard in 0..<2 {
            for bucket in 0..<ShardKeyspace.bucketCount {
                for sequence in 1...40 {
                    let offset = DeviceIDForm.offset(sequence: sequence, bucket: bucket, shard: shard, shards: 2)
                    #expect(offset < DeviceIDForm.extent(highestSequence: 40, shards: 2))
                    seen.insert(offset)
                }
            }
        }
        #expect(seen.count == 2 * ShardKeyspace.bucketCount * 40)
    }

    /// How many ranges of a job's sent state (65,536 positions) a chunk of 1,000 devices, a run
    /// of buckets of one shard as a scan reads them, touches with `perBucket` devices in each.
    func rangesOfAChunk(shards: Int, perBucket: Int) -> Int {
        let buckets = (1_000 + perBucket - 1) / perBucket
        var ranges = Set<Int>()
        for bucket in 300..<300 + buckets {
            for sequence in 1...perBucket {
                ranges.insert(DeviceIDForm.offset(sequence: sequence, bucket: bucket, shard: shards / 3, shards: shards) / 65_536)
            }
        }
        return ranges.count
    }

    @Test func aChunkTouchesAFewRangesAtAnySize() {
        // 100,000, 1M, 10M and 100M devices, in the shards that keep buckets compact.
        let counts = [(16, 6), (16, 61), (128, 76), (1_024, 95), (1_024, 128)].map { rangesOfAChunk(shards: $0.0, perBucket: $0.1) }
        #expect(counts.allSatisfy { $0 <= 6 }, "\(counts)")
    }

    @Test func openidJobsPublishInIDOrder() {
        let resolution = OpenIDResolution(tokens: [token(1), token(2), token(3)], ids: [900, 5, 70], unknownCount: 0, otherEnvironmentCount: 0)
        let ordered = resolution.byID
        #expect(ordered.ids == [5, 70, 900])
        #expect(ordered.tokens == [token(2), token(3), token(1)])
    }

    @Test func storedLayoutFields() {
        #expect(RegistryLayout(fields: ["shards": "16"]) == RegistryLayout(shards: 16, ids: .sequential), "stored before bucketed ids")
        #expect(RegistryLayout(fields: ["shards": "16", "ids": "bucket"]) == RegistryLayout(shards: 16))
        #expect(
            RegistryLayout(fields: ["shards": "64", "epoch": "2", "ids": "bucket", "base": "900", "from": "16"])
                == RegistryLayout(shards: 64, epoch: 2, idBase: 900, migratingFrom: 16))
        #expect(RegistryLayout(fields: [:]) == nil)
        #expect(RegistryLayout(fields: ["shards": "0"]) == nil)
        #expect(RegistryLayout(fields: ["shards": "8", "epoch": "x"]) == nil)
        #expect(RegistryLayout(fields: ["shards": "8", "from": "-1"]) == nil)
        #expect(RegistryLayout(fields: ["shards": "8", "ids": "random"]) == nil)
        #expect(RegistryLayout(shards: 64, epoch: 2, migratingFrom: 16).description == "16 → 64 shards (resharding, epoch 2)")
    }

    @Test func packedRecordsRoundTrip() throws {
        let records = [
            PackedDevice(id: 7, environment: .production, registeredAt: 1_700_000_000_123, tags: [3]),
            PackedDevice(id: 0, environment: .sandbox, registeredAt: 0),
            PackedDevice(
                id: .max, environment: .production, registeredAt: (1 << 48) - 1, tags: [9, 1, 9, 65_535], openID: "user-ü",
                generation: 12, suspicion: DeviceSuspicion(reason: "BadDeviceToken", since: 1_700_000_000_999)),
            PackedDevice(id: 42, environment: .sandbox, registeredAt: 5, suspicion: DeviceSuspicion(reason: "DeviceTokenNotForTopic", since: 6)),
        ]
        for record in records {
            #expect(PackedDevice(bytes: record.bytes) == record)
        }
        #expect(records[0].bytes.count == 15, "a device with one tag and no openid takes 15 bytes")
        #expect(records[2].tags == [1, 9, 65_535], "tags sorted, once each")
        let generation = try #require(records[2].generationOffset)
        #expect(Array(records[2].bytes[generation..<generation + 4]) == [12, 0, 0, 0])
        #expect(Array(records[0].bytes[PackedDevice.idOffset..<PackedDevice.idOffset + 4]) == [7, 0, 0, 0])

        #expect(PackedDevice(bytes: []) == nil)
        #expect(PackedDevice(bytes: [2] + records[0].bytes.dropFirst()) == nil, "another version")
        #expect(PackedDevice(bytes: records[0].bytes + [0]) == nil, "trailing bytes")
        #expect(PackedDevice(bytes: Array(records[2].bytes.dropLast())) == nil, "truncated")
    }

    @Test func matcherReadsTheRecordsBytes() {
        let news: UInt16 = 1
        let vip: UInt16 = 2
        let spam: UInt16 = 3
        func bytes(_ environment: APNsEnvironment, _ tags: [UInt16], suspect: Bool = false) -> [UInt8] {
            PackedDevice(
                id: 99, environment: environment, registeredAt: 1, tags: tags, openID: "u",
                suspicion: suspect ? DeviceSuspicion(reason: "BadDeviceToken", since: 1) : nil
            ).bytes
        }
        let devices = RecordMatcher(environment: .production, suspects: false)
        #expect(devices.id(ofMatching: bytes(.production, [])) == 99)
        #expect(devices.id(ofMatching: bytes(.sandbox, [])) == nil)
        #expect(devices.id(ofMatching: bytes(.production, [], suspect: true)) == nil)
        #expect(RecordMatcher(environment: .production, suspects: true).id(ofMatching: bytes(.production, [], suspect: true)) == 99)
        #expect(devices.id(ofMatching: [1, 1, 0]) == nil, "not a record")

        var tagged = RecordMatcher(environment: .production, suspects: false)
        tagged.all = [news]
        tagged.any = [vip, spam]
        tagged.none = [spam]
        #expect(tagged.id(ofMatching: bytes(.production, [news, vip])) == 99)
        #expect(tagged.id(ofMatching: bytes(.production, [news])) == nil, "none of any")
        #expect(tagged.id(ofMatching: bytes(.production, [vip])) == nil, "not all")
        #expect(tagged.id(ofMatching: bytes(.production, [news, vip, spam])) == nil, "one of none")
        #expect(tagged.id(ofMatching: bytes(.sandbox, [news, vip])) == nil)
    }
}
