import APNsCore
import Redis
import Testing

@testable import PushStore

/// ``JobStore``'s control state and held registry changes on a real redis-server.
@Suite("Job control in Redis")
struct JobControlStoreTests {
    let job = "job-1"

    func events(_ range: Range<Int>) -> [[UInt8]] {
        range.map { Array("event-\($0)".utf8) }
    }

    @Test("updates are compare-and-set: concurrent commands all land, one after the other")
    func compareAndSet() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            #expect(try await store.control(jobID: job) == JobControl())
            // 20 rate changes at once: each applied over the version it read, none lost.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for rate in 1...20 {
                    group.addTask { try await store.update(jobID: job, .setRate(Double(rate))) }
                }
                try await group.waitForAll()
            }
            let control = try await store.control(jobID: job)
            #expect(control.version == 20)
            #expect(control.ratePerSecond != nil)
            let ttl = try await client.send("PTTL", .string(JobKeyspace(jobID: job).control)).int ?? -1
            #expect(ttl > 0, "the control state expires with the job")
        }
    }

    @Test("a refused command changes nothing in Redis")
    func refused() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            await #expect(throws: JobControl.Refusal.self) { try await store.update(jobID: job, .resume(at: 1)) }
            #expect(try await client.send("EXISTS", .string(JobKeyspace(jobID: job).control)).int == 0)
        }
    }

    @Test("changes are held while watched or paused, released only once the gate applies")
    func holdThenRelease() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            let watched = try await store.offerEffects(jobID: job, events(0..<3))
            #expect(watched == JobStore.EffectsAnswer(gate: .hold, held: 3, state: .running))
            #expect(try await store.takeHeldEffects(jobID: job, limit: 10).isEmpty, "nothing leaves while held")
            try await store.update(jobID: job, .trip(reason: "r", at: 1))
            let paused = try await store.offerEffects(jobID: job, events(3..<5))
            #expect(paused == JobStore.EffectsAnswer(gate: .hold, held: 5, state: .paused))
            try await store.update(jobID: job, .resume(at: 2))
            let applying = try await store.offerEffects(jobID: job, events(5..<6))
            #expect(applying == JobStore.EffectsAnswer(gate: .apply, held: 5, state: .running), "the caller publishes, and releases the 5")
            #expect(try await store.takeHeldEffects(jobID: job, limit: 2) == events(0..<2))
            #expect(try await store.takeHeldEffects(jobID: job, limit: 10) == events(2..<5), "oldest first, each once")
            #expect(try await store.takeHeldEffects(jobID: job, limit: 10).isEmpty)
        }
    }

    @Test("cancelling discards the held changes and counts them; later ones are discarded at once")
    func cancelDiscards() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            _ = try await store.offerEffects(jobID: job, events(0..<4))
            #expect(try await store.cancel(jobID: job, at: 1_000))
            #expect(try await store.cancel(jobID: job, at: 2_000) == false)
            #expect(try await store.isCancelled(jobID: job))
            let late = try await store.offerEffects(jobID: job, events(4..<6))
            #expect(late.gate == .discard && late.held == 0 && late.state == .cancelled)
            let statistics = try await store.statistics(jobID: job)
            #expect(statistics[JobCounter.effectsDiscarded.name] == 6)
            #expect(statistics[JobCounter.cancelRequested.name] == 1_000, "the first request's time stays")
            #expect(try await client.send("EXISTS", .string(JobKeyspace(jobID: job).held)).int == 0)
            #expect(try await store.takeHeldEffects(jobID: job, limit: 10).isEmpty)
        }
    }
}
