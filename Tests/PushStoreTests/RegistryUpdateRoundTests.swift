import APNsCore
import Foundation
import Redis
import Testing

@testable import PushStore

/// The rounds of a registry update, without Redis: which records become which patches, and
/// what each answer of the apply-patches script makes of them.
@Suite("Registry update rounds")
struct RegistryUpdateRoundTests {
    typealias Round = RegistryUpdateRound

    static func token(_ n: Int) -> DeviceToken { try! DeviceToken(hex: String(format: "%064x", n)) }

    static let layout = RegistryLayout(shards: 8)
    static let record = PackedDevice(id: 7, environment: .production, registeredAt: 1_000, tags: [1])

    /// The apply-patches script's reply: a status per patch ("1" applied, "0" changed, "2"
    /// fenced, "3" moved), the ids handed to new devices (4 bytes each, little-endian), the
    /// generation before the first binding, and the current record of each changed patch.
    static func reply(_ statuses: String, ids: [UInt32] = [], generation: Int64 = 0, currents: [[UInt8]] = []) -> RedisReply {
        let idBytes = ids.flatMap { id in (0..<4).map { UInt8(truncatingIfNeeded: id >> (8 * $0)) } }
        return .array([.integer(1), .bulk(Array(statuses.utf8)), .bulk(idBytes), .integer(generation)] + currents.map { .bulk($0) })
    }

    static let staleReply = RedisReply.array([.integer(-1)])

    /// A round whose devices were found at their homes, `records[i]` for token `i`.
    static func round(_ records: [PackedDevice?]) -> Round {
        let tokens = records.indices.map { token($0 + 1) }
        var round = Round(tokens: tokens)
        round.found(
            zip(tokens, records).map { Round.Located(bytes: $1?.bytes, shard: layout.home(of: $0), atPreviousHome: false) },
            at: Array(tokens.indices))
        return round
    }

    @Test func everyDeviceIsReadBeforeItIsComputedUnlessAnImportTakesThemAsAbsent() {
        let tokens = [Self.token(1), Self.token(2)]
        #expect(Round(tokens: tokens).unread == [0, 1])
        var imported = Round(tokens: tokens, absentIn: Self.layout)
        #expect(imported.unread.isEmpty)
        imported.forgetRecords()
        #expect(imported.unread == [0, 1], "a stale layout's records are read again")
    }

    @Test func aKeptDeviceHasItsOutcomeWithoutAWrite() throws {
        var round = Self.round([Self.record, nil])
        let writes = try round.writes(layout: Self.layout) { index, _, old in
            index == 0 ? .keep : .write(PackedDevice(environment: .sandbox, registeredAt: 5), newDevice: true)
        }
        #expect(writes.flatMap(\.patches).map(\.index) == [1])
        #expect(writes.map(\.shard) == [Self.layout.home(of: Self.token(2))])
        #expect(try round.absorb([Self.reply("1", ids: [42])], to: writes) == .done)
        let results = round.results
        #expect(results[0].changed == false && results[0].old == Self.record && results[0].new == Self.record)
        #expect(results[1].changed && results[1].old == nil && results[1].new?.id == 42, "the id the script handed out")
    }

    @Test func allKeptIsDoneWithoutAnyCall() throws {
        var round = Self.round([Self.record])
        let writes = try round.writes(layout: Self.layout) { _, _, _ in .keep }
        #expect(writes.isEmpty)
        #expect(try round.absorb([], to: writes) == .done)
        #expect(round.results.map(\.changed) == [false])
    }

    @Test func aPatchCarriesTheRecordItWasComputedFrom() throws {
        var round = Self.round([Self.record])
        let writes = try round.writes(layout: Self.layout) { _, _, _ in .delete }
        let patch = try #require(writes.first?.patches.first)
        #expect(patch.expected == Self.record.bytes, "the script writes only over this record")
        #expect(patch.old == Self.record)
        #expect(try round.absorb([Self.reply("1")], to: writes) == .done)
        #expect(round.results[0].new == nil && round.results[0].changed)
    }

    @Test func aNewBindingTakesTheNextGenerationInOrder() throws {
        var round = Self.round([nil, nil])
        let bound = PackedDevice(environment: .production, registeredAt: 1, openID: "u1")
        let writes = try round.writes(layout: Self.layout) { _, _, _ in .write(bound, newDevice: true, newBinding: true) }
        let order = writes.flatMap(\.patches).map(\.index)
        let replies = writes.map { write in
            Self.reply(String(repeating: "1", count: write.patches.count), ids: write.patches.map { UInt32(100 + $0.index) }, generation: 9)
        }
        #expect(try round.absorb(replies, to: writes) == .done)
        for index in order {
            #expect(round.results[index].new?.id == UInt32(100 + index))
        }
        let generations = writes.flatMap { write in write.patches.map { round.results[$0.index].new?.generation } }
        #expect(generations == writes.flatMap { write in write.patches.indices.map { UInt32(10 + $0) } })
    }

    @Test func aDeviceChangedMeanwhileIsComputedAgainFromWhatItIsNow() throws {
        var round = Self.round([Self.record])
        let writes = try round.writes(layout: Self.layout) { _, _, old in .write(old!) }
        var now = Self.record
        now.tags = [1, 2]
        #expect(try round.absorb([Self.reply("0", currents: [now.bytes])], to: writes) == .again)
        #expect(round.pending == [0])
        #expect(round.unread.isEmpty, "the script answered what it is now: no read")
        var seen: PackedDevice?
        let again = try round.writes(layout: Self.layout) { _, _, old in
            seen = old
            return .keep
        }
        #expect(again.isEmpty && seen == now)
    }

    @Test func aDeviceGoneMeanwhileIsReadAgain() throws {
        var round = Self.round([Self.record])
        let writes = try round.writes(layout: Self.layout) { _, _, _ in .delete }
        #expect(try round.absorb([Self.reply("0", currents: [[]])], to: writes) == .again)
        #expect(round.unread == [0])
    }

    @Test func aMovedDeviceIsReadAgainAndAFencedOneWaitedFor() throws {
        var round = Self.round([Self.record, Self.record])
        let writes = try round.writes(layout: Self.layout) { _, _, _ in .delete }
        let statuses = writes.map { write in String(write.patches.map { $0.index == 0 ? "3" : "2" }) }
        #expect(try round.absorb(zip(writes, statuses).map { Self.reply($1) }, to: writes) == .fenced)
        #expect(round.unread == [0, 1])

        var moved = Self.round([Self.record])
        let movedWrites = try moved.writes(layout: Self.layout) { _, _, _ in .delete }
        #expect(try moved.absorb([Self.reply("3")], to: movedWrites) == .again)
        #expect(moved.unread == [0])
    }

    @Test func aStaleShardOutweighsAFencedOneAndForgetsEveryRecord() throws {
        let tokens = (1...40).map { Self.token($0) }
        let shards = Set(tokens.map { Self.layout.home(of: $0) })
        try #require(shards.count >= 2, "the tokens must reach two shards")
        var round = Round(tokens: tokens)
        round.found(
            tokens.map { Round.Located(bytes: Self.record.bytes, shard: Self.layout.home(of: $0), atPreviousHome: false) }, at: Array(tokens.indices))
        let writes = try round.writes(layout: Self.layout) { _, _, _ in .delete }
        #expect(writes.map(\.shard) == writes.map(\.shard).sorted(), "shard order")
        var replies = writes.map { Self.reply(String(repeating: "0", count: $0.patches.count), currents: $0.patches.map { _ in Self.record.bytes }) }
        replies[0] = Self.reply(String(repeating: "2", count: writes[0].patches.count))
        replies[replies.count - 1] = Self.staleReply
        #expect(try round.absorb(replies, to: writes) == .staleLayout)
        #expect(round.pending.count == tokens.count)
        #expect(round.unread.count == tokens.count, "changed records answered by a stale layout's round are read again")
    }

    @Test func whileReshardingAChangeGoesWhereTheRecordIsAndANewDeviceToItsHome() throws {
        let resharding = RegistryLayout(shards: 16, epoch: 1, migratingFrom: 8)
        let tokens = (1...60).map { Self.token($0) }
        let moving = try #require(tokens.first { resharding.previousHome(of: $0) != nil })
        let previous = try #require(resharding.previousHome(of: moving))
        var round = Round(tokens: [moving, moving])
        round.found(
            [
                Round.Located(bytes: Self.record.bytes, shard: previous, atPreviousHome: true),
                Round.Located(bytes: nil, shard: previous, atPreviousHome: true),
            ], at: [0, 1])
        let writes = try round.writes(layout: resharding) { _, _, old in
            .write(old ?? PackedDevice(environment: .production, registeredAt: 1), newDevice: old == nil)
        }
        let patches = writes.flatMap { write in write.patches.map { (write.shard, $0) } }
        let existing = try #require(patches.first { $0.1.index == 0 })
        let new = try #require(patches.first { $0.1.index == 1 })
        #expect(existing.0 == previous && existing.1.atPreviousHome)
        #expect(new.0 == resharding.home(of: moving) && !new.1.atPreviousHome)
    }

    @Test func writesAreCutIntoCallsOfAtMostFiveHundredPatches() throws {
        let tokens = (0..<1_100).map(Self.token)
        let oneShard = RegistryLayout(shards: 1)
        var round = Round(tokens: tokens, absentIn: oneShard)
        let writes = try round.writes(layout: oneShard) { _, _, _ in .write(PackedDevice(environment: .production, registeredAt: 1), newDevice: true)
        }
        #expect(writes.map(\.patches.count) == [DeviceRegistry.patchesPerCall, DeviceRegistry.patchesPerCall, 100])
        #expect(writes.flatMap(\.patches).map(\.index) == Array(tokens.indices))
    }

    /// The change sets a call lists (ARGV 9 on: per set its pair count, then target, change
    /// pairs) and the set each patch names (the u16 at byte 8 of its packed form).
    static func changeSets(_ call: RedisScriptCall, patches: Int) -> (sets: [[String: Int]], named: [Int]) {
        var arguments = call.arguments.dropFirst(7).makeIterator()
        guard case .integer(let count) = arguments.next() else { return ([], []) }
        var sets: [[String: Int]] = []
        for _ in 0..<count {
            guard case .integer(let pairs) = arguments.next() else { return ([], []) }
            var set: [String: Int] = [:]
            for _ in 0..<pairs {
                guard case .string(let target) = arguments.next(), case .integer(let change) = arguments.next() else { return ([], []) }
                set[target] = change
            }
            sets.append(set)
        }
        guard case .bytes(let packed) = arguments.next() else { return ([], []) }
        var named: [Int] = []
        var position = 0
        for _ in 0..<patches {
            named.append(Int(packed[position + 8]) | Int(packed[position + 9]) << 8)
            let tokenLength = Int(packed[position + 10])
            position += 11 + tokenLength
            for _ in 0..<2 {
                position += 2 + (Int(packed[position]) | Int(packed[position + 1]) << 8)
            }
        }
        return (sets, named)
    }

    @Test func aCallListsEachDistinctCounterChangeOnceAndEveryPatchNamesItsOwn() throws {
        let registry = DeviceRegistry(client: RedisClient(configuration: RedisConfiguration(port: 1)))
        let production = PackedDevice(id: 1, environment: .production, registeredAt: 1, tags: [3])
        var suspect = production
        suspect.suspicion = DeviceSuspicion(reason: "BadDeviceToken", since: 5)
        var retagged = production
        retagged.tags = [3, 4]
        var otherTags = production
        otherTags.tags = [9]
        var moved = otherTags
        moved.tags = [4, 9]
        let olds: [PackedDevice?] = [nil, nil, production, production, production, otherTags, nil]
        let changes: [DeviceRegistry.RecordChange] = [
            .write(production, newDevice: true), .write(production, newDevice: true), .write(suspect), .write(retagged),
            .write(production), .write(moved), .write(PackedDevice(environment: .sandbox, registeredAt: 1), newDevice: true),
        ]
        let tokens = olds.indices.map { Self.token($0 + 1) }
        let patches = olds.indices.map { index in
            DeviceRegistry.Patch(
                index: index, token: tokens[index], expected: olds[index]?.bytes, change: changes[index], old: olds[index], atPreviousHome: false)
        }
        let call = registry.patchCall(app: "app", shard: 0, layout: Self.layout, patches)
        let (sets, named) = Self.changeSets(call, patches: patches.count)
        #expect(
            sets == [
                ["n:production": 1, "t:3": 1],
                ["n:production": -1, "n:suspect:production": 1],
                ["t:4": 1],
                ["n:sandbox": 1],
            ])
        // Two new devices alike share a set; a rewrite that changes nothing counted names none;
        // a tag added to other tags is the same change as `retagged`'s.
        #expect(named == [1, 1, 2, 3, 0, 3, 4])
    }

    @Test func aDevicesTagIDsAreSortedOnceEach() throws {
        #expect(try DeviceRegistry.tags([], field: "tags") == [])
        #expect(try DeviceRegistry.tags([7], field: "tags") == [7])
        #expect(try DeviceRegistry.tags([9, 2, 9, 2, 5, 2], field: "tags") == [2, 5, 9])
        let tooMany = (0...UInt16(PackedDevice.maxTags)).map { $0 }
        #expect(throws: StoreError.self) { try DeviceRegistry.tags(tooMany + tooMany, field: "tags") }
        #expect(try DeviceRegistry.tags(Array(tooMany.dropLast()) + [0], field: "tags").count == PackedDevice.maxTags)
    }

    @Test func aReplyThatIsNotTheScriptsThrows() throws {
        var round = Self.round([Self.record])
        let writes = try round.writes(layout: Self.layout) { _, _, _ in .delete }
        #expect(throws: StoreError.self) { try round.absorb([.status("OK")], to: writes) }
    }
}
