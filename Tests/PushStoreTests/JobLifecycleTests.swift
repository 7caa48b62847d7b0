import APNsCore
import Redis
import Testing

@testable import PushStore

@Suite("Job cancellation, receipts and idempotency keys")
struct JobLifecycleTests {
    let job = "job-1"
    let token = try! DeviceToken(hex: String(repeating: "ab", count: 32))
    let otherToken = try! DeviceToken(hex: String(repeating: "cd", count: 32))

    @Test func cancelIsRecordedOnceAndSeen() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client, specTimeToLive: .seconds(60))
            #expect(try await store.isCancelled(jobID: job) == false)
            #expect(try await store.cancel(jobID: job, at: 1_000))
            #expect(try await store.cancel(jobID: job, at: 2_000) == false)
            #expect(try await store.isCancelled(jobID: job))
            #expect(try await store.isCancelled(jobID: "other") == false)
            #expect(try await store.statistics(jobID: job)[JobCounter.cancelRequested.name] == 1_000, "the first request's time stays")
            let ttl = try await client.pttl(JobKeyspace(jobID: job).stats)
            #expect(ttl > 0 && ttl <= 60_000)
        }
    }

    @Test func receiptsCountEachDeviceOncePerEvent() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            #expect(try await store.recordReceipt(jobID: job, token: token, event: .delivered))
            #expect(try await store.recordReceipt(jobID: job, token: token, event: .delivered) == false)
            #expect(try await store.recordReceipt(jobID: job, token: otherToken, event: .delivered))
            #expect(try await store.recordReceipt(jobID: job, token: token, event: .opened))
            #expect(try await store.recordReceipt(jobID: "job-2", token: token, event: .opened))
            #expect(try await store.statistics(jobID: job) == ["delivered": 2, "opened": 1])
        }
    }

    @Test func receiptsOfManyDevicesCountTheNewOnes() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            #expect(try await store.recordReceipt(jobID: job, token: token, event: .delivered))
            // One seen before, one new, the new one listed twice: counted once.
            #expect(try await store.recordReceipts(jobID: job, tokens: [token, otherToken, otherToken], event: .delivered) == 1)
            #expect(try await store.recordReceipts(jobID: job, tokens: [], event: .delivered) == 0)
            #expect(try await store.statistics(jobID: job) == ["delivered": 2])
            #expect(try await store.receipts(of: otherToken, jobIDs: [job]) == [job: [.delivered]])
        }
    }

    @Test func aDeviceReceiptsAreFoundAcrossJobsInTheirSlots() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            let jobs = (0..<12).map { "job-\($0)" }
            for (index, jobID) in jobs.enumerated() where index.isMultiple(of: 3) {
                _ = try await store.recordReceipt(jobID: jobID, token: token, event: .delivered)
            }
            _ = try await store.recordReceipt(jobID: "job-3", token: token, event: .opened)
            _ = try await store.recordReceipt(jobID: "job-4", token: otherToken, event: .opened)
            let found = try await store.receipts(of: token, jobIDs: jobs)
            #expect(found == ["job-0": [.delivered], "job-3": [.delivered, .opened], "job-6": [.delivered], "job-9": [.delivered]])
            #expect(try await store.receipts(of: otherToken, jobIDs: jobs) == ["job-4": [.opened]])
            #expect(try await store.receipts(of: token, jobIDs: []) == [:])
        }
    }

    @Test func anIdempotencyKeyBelongsToItsFirstJob() async throws {
        try await withRedis { client async throws in
            let keys = IdempotencyKeys(client: client, timeToLive: .seconds(60))
            #expect(try await keys.claim(app: "news", key: "k-1", jobID: "job-a", digest: "d1") == nil)
            #expect(try await keys.claim(app: "news", key: "k-1", jobID: "job-b", digest: "d2") == .init(jobID: "job-a", digest: "d1"))
            #expect(try await keys.claim(app: "news", key: "k-1", jobID: "job-a") == .init(jobID: "job-a", digest: "d1"))
            #expect(try await keys.claim(app: "shop", key: "k-1", jobID: "job-c") == nil, "keys are per app")
            #expect(try await keys.claim(app: "news", key: "{weird}\u{1}:key", jobID: "job-d") == nil, "keys are binary-safe")

            #expect(try await keys.release(app: "news", key: "k-1", jobID: "job-b") == false, "only the owner releases")
            #expect(try await keys.release(app: "news", key: "k-1", jobID: "job-a"))
            #expect(try await keys.claim(app: "news", key: "k-1", jobID: "job-e") == nil)
            let ttl = try await client.pttl(IdempotencyKeys.redisKey(app: "news", key: "k-1"))
            #expect(ttl > 0 && ttl <= 60_000)

            await #expect(throws: StoreError.self) { try await keys.claim(app: "news", key: "", jobID: "job-f") }
            await #expect(throws: StoreError.self) { try await keys.claim(app: "news", key: "k", jobID: "job-f", digest: "a\nb") }
        }
    }
}
