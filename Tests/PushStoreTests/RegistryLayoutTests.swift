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
        for (current, target) in [(16, 16), (16, 8), (16, 24), (16, 2_048), (512, 1_536)] {
            #expect(throws: StoreError.self, "\(current) → \(target)") { try RegistryLayout.checkGrowth(from: current, to: target) }
            do {
                try RegistryLayout.checkGrowth(from: current, to: target)
            } catch {
                #expect(error.field == "shards")
            }
        }
    }

    @Test func idsOfANewEpochStartAboveTheOldOnes() throws {
        let layout = RegistryLayout(shards: 16, epoch: 1, idBase: 1_000)
        // Shard s hands out base + (sequence - 1) × shards + s: the highest is below base + highest × shards.
        #expect(try layout.nextIDBase(highestSequence: 500) == 1_000 + 500 * 16)
        let full = RegistryLayout(shards: 1_024, idBase: UInt32.max - 2_000_000)
        #expect(throws: StoreError.self) { try full.nextIDBase(highestSequence: 1_000) }
    }

    @Test func storedLayoutFields() {
        #expect(RegistryLayout(fields: ["shards": "16"]) == RegistryLayout(shards: 16))
        #expect(
            RegistryLayout(fields: ["shards": "64", "epoch": "2", "base": "900", "from": "16"])
                == RegistryLayout(shards: 64, epoch: 2, idBase: 900, migratingFrom: 16))
        #expect(RegistryLayout(fields: [:]) == nil)
        #expect(RegistryLayout(fields: ["shards": "0"]) == nil)
        #expect(RegistryLayout(fields: ["shards": "8", "epoch": "x"]) == nil)
        #expect(RegistryLayout(fields: ["shards": "8", "from": "-1"]) == nil)
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
