import APNsCore
import PushCore
import Redis
import Testing

@testable import PushStore

/// What a recall reads and writes in the job store, on a real redis-server: the positions accepted (a sent marker without a refused bit)
/// set with the outcomes, the tokens accepted on a resend, and the one link from a campaign to
/// its recall.
@Suite("Job store: recall")
struct JobRecallStoreTests {
    let job = "campaign-1"

    @Test func acceptedBitsFollowTheOutcomeNotTheFirstMarkerAcrossRanges() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            let accepted: [UInt32] = [3, 65_536 + 3, 3 * 65_536 + 65_535]
            let refused: [UInt32] = [4, 65_536 + 4]
            try await store.recordOutcomes(
                jobID: job,
                accepted.map { DeliveryOutcomeRecord(position: $0, counter: .accepted, countsAsSent: true) }
                    + refused.map { DeliveryOutcomeRecord(position: $0, counter: .failed(reason: "Unregistered"), countsAsSent: true) }
                    + [DeliveryOutcomeRecord(position: 7, counter: .retried, countsAsSent: true)]
                    + [DeliveryOutcomeRecord(position: 8, counter: .cancelled, countsAsSent: false)])
            let asked: [UInt32] = [4, 3, 7, 8, 9, 65_536 + 4, 65_536 + 3, 3 * 65_536 + 65_535]
            #expect(try await store.wasAccepted(jobID: job, positions: asked) == [false, true, false, false, false, false, true, true])
            #expect(try await store.hasMarkers(jobID: job, positions: asked) == [true, true, true, true, false, true, true, true])
            #expect(try await store.statistics(jobID: job)["sent"] == 6, "the accepted flag counts as sent, as before")
            #expect(try await store.statistics(jobID: job)["accepted"] == 3)

            // A chunk sent again after a crash: the marker was set, the device got it again.
            try await store.recordOutcomes(jobID: job, [DeliveryOutcomeRecord(position: 4, counter: .accepted, countsAsSent: true)])
            #expect(try await store.wasAccepted(jobID: job, positions: [4]) == [true])
            #expect(try await store.statistics(jobID: job)["accepted"] == 3, "counted once: the first outcome wins")
            #expect(try await store.wasAccepted(jobID: "other", positions: [3]) == [false])
        }
    }

    @Test func tokensAcceptedOnAResendAreKeptWithTheJobsTimeToLive() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client, specTimeToLive: .seconds(60))
            let tokens = [try DeviceToken(hex: String(repeating: "a1", count: 32)), try DeviceToken(hex: String(repeating: "b2", count: 32))]
            #expect(try await store.acceptedResends(jobID: job).isEmpty)
            try await store.recordAcceptedResends(jobID: job, tokens: tokens)
            try await store.recordAcceptedResends(jobID: job, tokens: [tokens[0]])
            #expect(try await store.acceptedResends(jobID: job) == Set(tokens))
            let ttl = try await client.pttl(JobKeyspace(jobID: job).acceptedResends)
            #expect(ttl > 0 && ttl <= 60_000)
        }
    }

    @Test func aCampaignIsRecalledOnceAndAFailedRecallGivesItsClaimBack() async throws {
        try await withRedis { client async throws in
            let store = JobStore(client: client)
            #expect(try await store.recalledBy(jobID: job) == nil)
            #expect(try await store.claimRecall(of: job, by: "r-1", mode: .withdraw) == nil)
            #expect(try await store.claimRecall(of: job, by: "r-2", mode: .overwrite) == JobStore.RecallLink(jobID: "r-1", mode: .withdraw))
            #expect(try await store.recalledBy(jobID: job) == JobStore.RecallLink(jobID: "r-1", mode: .withdraw))
            try await store.releaseRecall(of: job, by: "r-2", mode: .overwrite)
            #expect(try await store.recalledBy(jobID: job)?.jobID == "r-1", "another recall's claim is left alone")
            try await store.releaseRecall(of: job, by: "r-1", mode: .withdraw)
            #expect(try await store.claimRecall(of: job, by: "r-3", mode: .overwrite) == nil)
            #expect(try await store.recalledBy(jobID: job) == JobStore.RecallLink(jobID: "r-3", mode: .overwrite))

            // A report reads the spec and the link in one round trip.
            #expect(try await store.specAndRecall(jobID: "r-3") == (nil, nil))
            try await store.saveSpec(jobID: job, json: Array(#"{"name":"Spring sale"}"#.utf8))
            let (spec, link) = try await store.specAndRecall(jobID: job)
            #expect(spec?.objectValue?["name"]?.stringValue == "Spring sale")
            #expect(link == JobStore.RecallLink(jobID: "r-3", mode: .overwrite))
        }
    }
}
