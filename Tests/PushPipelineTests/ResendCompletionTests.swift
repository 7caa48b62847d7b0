import APNsCore
import Foundation
import LocalRedis
import Logging
import PushStore
import Redis
import Synchronization
import Testing

@testable import PushPipeline

@Suite("Resend completion: each final outcome counted once, a completer's death included")
struct ResendCompletionTests {
    final class HandClock: Sendable {
        let now = Atomic<Int64>(1_800_000_000_000)
        var read: @Sendable () -> Int64 { { [self] in now.load(ordering: .relaxed) } }
    }

    static func entry(_ n: Int) -> ResendEntry {
        let token = try! DeviceToken(hex: String(repeating: "ab", count: 24) + String(format: "%016x", n))
        return ResendEntry(jobID: "job-1", token: token, attempts: 0, firstFailedAt: 0, lastReason: "online")
    }

    @Test("a completer that dies between the resend buffer and the job's counters: a drainer counts its tally once, later (real redis-server)")
    func aTallyLeftBehindIsCountedOnceByTheDrainer() async throws {
        try await LocalRedisServer.with { server async throws in
            let client = RedisClient(configuration: server.configuration)
            let clock = HandClock()
            let resend = ResendBuffer(client: client, clock: clock.read)
            let jobs = JobStore(client: client)
            let completion = ResendCompletion(resend: resend, jobs: jobs, logger: Logger(label: "test"))
            let entries = (0..<10).map(Self.entry)
            _ = try await resend.schedule(
                app: "news",
                entries.map { ResendFailure(jobID: $0.jobID, token: $0.token, attempts: 0, firstFailedAt: clock.read(), reason: "online") })
            #expect(try await resend.depth(app: "news") == 10)

            // A gateway completes four acked sends and dies before it counts them: only the
            // buffer's script ran.
            let died = try await resend.complete(app: "news", jobID: "job-1", Array(entries[0..<4]), counting: Array(repeating: [.online], count: 4))
            #expect(died.removed == [true, true, true, true])
            // A live completer ends the rest (two of the dead one's among them: not counted again).
            let removed = try await completion.complete(
                app: "news", jobID: "job-1", Array(entries[2...]), counting: Array(repeating: [.online], count: 8))
            #expect(removed == [false, false] + Array(repeating: true, count: 6))
            #expect(try await jobs.statistics(jobID: "job-1")["online"] == 6)

            // Not yet old enough for a drainer.
            #expect(try await completion.recoverTallies(app: "news") == 0)
            clock.now.add(Int64(ResendCompletion.recoveryAge.components.seconds) * 1_000 + 1, ordering: .relaxed)
            #expect(try await completion.recoverTallies(app: "news") == 1)
            #expect(try await jobs.statistics(jobID: "job-1")["online"] == 10)
            // Applied and forgotten: a second drainer finds nothing, and a late apply counts nothing.
            #expect(try await completion.recoverTallies(app: "news") == 0)
            #expect(try await jobs.apply(try #require(died.tally)) == false)
            #expect(try await jobs.statistics(jobID: "job-1")["online"] == 10)
            await client.shutdown()
        }
    }
}
