import APNsCore
import PushCore
import Redis
import Testing

@testable import PushStore

/// Raising an app's shard count on a live registry, on a real redis-server (or cluster): every
/// device keeps its record and id, broadcasts read each device once while it runs, and an
/// interrupted reshard finishes when run again.
@Suite("Registry reshard")
struct DeviceRegistryReshardTests {
    let app = "reshard"

    /// `count` devices: tags by residue, an openid on every third, sandbox for every fifth.
    func populate(_ registry: DeviceRegistry, count: Int) async throws -> [DeviceRegistration] {
        let devices = (0..<count).map { number in
            DeviceRegistration(
                token: token(number), environment: number.isMultiple(of: 5) ? .sandbox : .production,
                openID: number.isMultiple(of: 3) ? "user-\(number)" : nil, tags: number.isMultiple(of: 2) ? ["even"] : ["odd", "x"])
        }
        try await registry.bind(devices, app: app)
        return devices
    }

    /// Every device's record as ``DeviceRegistry/device(app:token:)`` reads it, with its id.
    func snapshot(_ registry: DeviceRegistry, _ devices: [DeviceRegistration]) async throws -> [DeviceToken: (DeviceRecord, UInt32)] {
        var records: [DeviceToken: (DeviceRecord, UInt32)] = [:]
        let ids = try await registry.records(app: app, tokens: devices.map(\.token))
        for (device, packed) in zip(devices, ids) {
            let record = try #require(try await registry.device(app: app, token: device.token))
            records[device.token] = (record, try #require(packed).id)
        }
        return records
    }

    @Test func aReshardKeepsEveryDeviceAndItsID() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 4)) { registry, client in
            let devices = try await populate(registry, count: 3_000)
            let before = try await snapshot(registry, devices)
            let countBefore = try await registry.deviceCount(app: app)
            let tagsBefore = try await registry.appTags(app: app)

            let report = try await registry.reshard(app: app, to: 16, concurrency: 2)
            #expect(report.before == RegistryLayout(shards: 4))
            #expect(report.after.shards == 16 && report.after.epoch == 1 && report.after.migratingFrom == nil)
            #expect(report.bucketsMoved == 4 * ShardKeyspace.bucketCount)
            // About three in four devices move to a new shard.
            #expect(report.devicesMoved > 2_000 && report.devicesMoved < 2_500)

            let after = try await snapshot(registry, devices)
            for device in devices {
                #expect(after[device.token]?.0 == before[device.token]?.0)
                #expect(after[device.token]?.1 == before[device.token]?.1, "a device keeps its id")
                #expect(try await registry.storedRecord(device.token, app: app, client: client) != nil, "in its new home")
            }
            #expect(try await registry.deviceCount(app: app) == countBefore)
            #expect(try await registry.appTags(app: app) == tagsBefore)
            let production = try await registry.audience(app: app, environment: .production)
            #expect(Set(production.keys) == Set(devices.filter { $0.environment == .production }.map(\.token)))
            let resolution = try await registry.resolveOpenIDs(app: app, environment: .sandbox, openIDs: ["user-0", "user-15", "user-3"])
            #expect(resolution.tokens == [token(0), token(15)])

            // New devices get ids past every id the old epoch's layers hold; a second process
            // reads the new layout.
            try await registry.bind(app: app, token: token(90_000), environment: .production)
            let newID = try #require(try await registry.records(app: app, tokens: [token(90_000)])[0]?.id)
            #expect(report.after.ids == .bucketed && report.after.idBase > 0)
            #expect(Int(newID) >= Int(DeviceIDForm.bucketedBase) + Int(report.after.idBase))
            #expect(newID > before.values.map(\.1).max()!)
            let other = DeviceRegistry(client: client, configuration: DeviceRegistryConfiguration(defaultShardCount: 4))
            #expect(try await other.layout(app: app) == report.after)

            // Reshard to the same count: nothing to do. Bad targets are refused, naming the field.
            #expect(try await registry.reshard(app: app, to: 16).bucketsMoved == 0)
            for bad in [24, 8, 4_096] {
                let error = await registryError { try await registry.reshard(app: app, to: bad) }
                #expect(error?.field == "shards", "\(bad)")
            }
            #expect(try await registry.layout(app: app) == report.after)
        }
    }

    @Test func broadcastsAndWritesDuringAReshardSeeEachDeviceOnce() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 2)) { registry, client in
            let devices = try await populate(registry, count: 4_000)
            let production = Set(devices.filter { $0.environment == .production }.map(\.token))
            let ids = try await snapshot(registry, devices).mapValues(\.1)
            // The devices changed while the reshard runs: half of them get a tag, a few are unbound.
            let tagged = devices.filter { $0.environment == .production }.map(\.token).filter { Int($0.hex, radix: 16)!.isMultiple(of: 7) }
            let unbound = Set(devices.map(\.token).filter { Int($0.hex, radix: 16)!.isMultiple(of: 101) })
            let added = (50_000..<50_300).map(token)

            let scans = try await withThrowingTaskGroup(of: Int.self) { group in
                group.addTask {
                    _ = try await registry.reshard(app: app, to: 8, concurrency: 1)
                    return 0
                }
                group.addTask {
                    // Broadcasts planned before the reshard, running through it, one after another.
                    let reader = DeviceRegistry(client: client, configuration: DeviceRegistryConfiguration(defaultShardCount: 2))
                    let tasks = try await reader.layout(app: app).taskCount
                    #expect(tasks == 2)
                    var scans = 0
                    while try await reader.layout(app: app).migratingFrom != nil || scans == 0 {
                        var seen: [DeviceToken: UInt32] = [:]
                        for task in 0..<tasks {
                            var cursor: UInt64 = 0
                            repeat {
                                let page = try await reader.scanShard(
                                    app: app, task: ShardTask(shard: task, of: tasks), environment: .production, cursor: cursor, count: 64)
                                for (scanned, id) in zip(page.tokens, page.ids) {
                                    #expect(seen.updateValue(id, forKey: scanned) == nil, "\(scanned.hex) seen twice")
                                }
                                cursor = page.cursor
                            } while cursor != 0
                        }
                        // Every device that was there before and not unbound is seen, with its id.
                        let kept = production.subtracting(unbound)
                        #expect(kept.isSubset(of: seen.keys))
                        #expect(kept.allSatisfy { seen[$0] == ids[$0] })
                        scans += 1
                        _ = try await reader.refreshLayout(app: app)
                    }
                    return scans
                }
                group.addTask {
                    let writer = DeviceRegistry(client: client, configuration: DeviceRegistryConfiguration(defaultShardCount: 2))
                    for (index, token) in tagged.enumerated() {
                        _ = try await writer.addTags(["late"], app: app, token: token)
                        if index < added.count {
                            try await writer.bind(app: app, token: added[index], environment: .production, tags: ["late"])
                        }
                    }
                    for token in unbound {
                        _ = try await writer.unbind(app: app, token: token)
                    }
                    return 0
                }
                return try await group.reduce(0, +)
            }
            print("reshard 2 → 8 under writes: \(scans) full scans ran through it")
            #expect(scans >= 1)

            // Afterwards every write made during the reshard is there, once.
            #expect(try await registry.layout(app: app) == RegistryLayout(shards: 8, epoch: 1, idBase: try await registry.layout(app: app).idBase))
            let late = try await registry.audience(app: app, environment: .production, filter: .tags(TagExpression(all: ["late"])))
            #expect(Set(late.keys) == Set(tagged).subtracting(unbound).union(added))
            let everyone = try await registry.audience(app: app, environment: .production)
            #expect(Set(everyone.keys) == production.subtracting(unbound).union(added))
            #expect(Set(everyone.values).count == everyone.count, "ids are unique")
            let count = try await registry.deviceCount(app: app)
            #expect(count.production == everyone.count)
            for token in unbound {
                #expect(try await registry.storedRecord(token, app: app, client: client) == nil)
                #expect(try await registry.device(app: app, token: token) == nil)
            }
        }
    }

    @Test func anInterruptedReshardFinishesWhenRunAgain() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 2)) { registry, client in
            let devices = try await populate(registry, count: 2_000)
            let before = try await snapshot(registry, devices)
            // As if the process running the reshard died after entering the epoch and moving
            // part of shard 0.
            let moving = try await registry.enterEpoch(app: app, layout: try await registry.layout(app: app), target: 4)
            #expect(moving.migratingFrom == 2 && moving.shards == 4)
            for bucket in 0..<300 {
                _ = try await registry.moveBucket(bucket, of: 0, app: app, layout: moving)
            }
            // Meanwhile the registry works: reads find every device, a reshard to another
            // count is refused until this one is finished.
            let other = DeviceRegistry(client: client, configuration: DeviceRegistryConfiguration(defaultShardCount: 2))
            #expect(try await snapshot(other, devices).mapValues(\.1) == before.mapValues(\.1))
            #expect(await registryError { try await other.reshard(app: app, to: 8) }?.field == "shards")

            let report = try await other.reshard(app: app, to: 4)
            #expect(report.bucketsMoved == 2 * ShardKeyspace.bucketCount - 300, "the buckets moved before are skipped")
            #expect(report.after.migratingFrom == nil && report.after.shards == 4)
            let after = try await snapshot(other, devices)
            for device in devices {
                #expect(after[device.token]?.0 == before[device.token]?.0)
                #expect(after[device.token]?.1 == before[device.token]?.1)
            }
            let all = try await other.audience(app: app, environment: .production)
            #expect(all.count == devices.filter { $0.environment == .production }.count)
        }
    }

    @Test func aLegacyAppKeepsSequentialIDsUntilItsReshard() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 2)) { registry, client in
            // A layout stored before bucketed ids: no `ids` field.
            _ = try await client.send("HSET", .string(AppKeyspace(app: app).layout), "shards", "2")
            let old = try await populate(registry, count: 400)
            let oldIDs = try await snapshot(registry, old).mapValues(\.1)
            #expect(try await registry.layout(app: app).ids == .sequential)
            #expect(oldIDs.values.allSatisfy { $0 < 400 }, "sequential ids count the shards' devices")
            #expect(Set(oldIDs.values).count == 400)

            let report = try await registry.reshard(app: app, to: 4)
            #expect(report.after.ids == .bucketed && report.after.idBase == 0)
            #expect(try await snapshot(registry, old).mapValues(\.1) == oldIDs, "devices keep their ids")
            let added = (1_000..<1_400).map { DeviceRegistration(token: token($0), environment: .production) }
            try await registry.bind(added, app: app)
            let newIDs = try await snapshot(registry, added).values.map(\.1)
            #expect(newIDs.allSatisfy { $0 >= DeviceIDForm.bucketedBase })
            #expect(Set(newIDs).union(oldIDs.values).count == 800)
        }
    }
}
