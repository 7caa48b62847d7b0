import APNsCore
import LocalRedis
import Logging
import PushStore
import Redis
import Synchronization
import Testing

@testable import PushGateway

@Suite("Presence writer")
struct PresenceWriterTests {
    @Test("what a change carries runs once the change is in Redis: a connecting device's inbox is read after its claim (real redis-server)")
    func aChangesFollowUpRunsAfterItIsWritten() async throws {
        try await LocalRedisServer.with { server async throws in
            let client = RedisClient(configuration: server.configuration)
            let store = PresenceStore(client: client)
            let writer = PresenceWriter(store: store, lease: .seconds(30), logger: Logger(label: "test"))
            let device = try DeviceToken(hex: String(repeating: "ef", count: 32))
            let record = PresenceRecord(gateway: "gw-a", connection: 7)
            let ran = Atomic(0)
            writer.enqueue(PresenceChange(.claim, app: "news", token: device, record: record)) { ran.add(1, ordering: .relaxed) }
            // Nothing written yet, nothing run.
            #expect(ran.load(ordering: .relaxed) == 0)
            #expect(try await store.lookup(app: "news", tokens: [device]).isEmpty)
            await writer.flush()
            #expect(ran.load(ordering: .relaxed) == 1)
            #expect(try await store.lookup(app: "news", tokens: [device]) == [device: record])
            // Run once: a later flush writes nothing and runs nothing again.
            await writer.flush()
            #expect(ran.load(ordering: .relaxed) == 1)
            await client.shutdown()

            // A change Redis did not take (nothing listens) stays pending, and so does what it
            // carries.
            var nowhere = server.configuration
            nowhere.port = try LocalRedisServer.freePort()
            nowhere.reconnect = .init(maxAttempts: 1)
            let unreachable = RedisClient(configuration: nowhere)
            let waiting = PresenceWriter(store: PresenceStore(client: unreachable), lease: .seconds(30), logger: Logger(label: "test"))
            waiting.enqueue(PresenceChange(.claim, app: "news", token: device, record: record)) { ran.add(1, ordering: .relaxed) }
            await waiting.flush()
            #expect(ran.load(ordering: .relaxed) == 1)
            await unreachable.shutdown()
        }
    }
}
