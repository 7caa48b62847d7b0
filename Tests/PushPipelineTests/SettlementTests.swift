import APNs
import APNsCore
import Foundation
import PushCore
import PushStore
import Testing

@testable import PushPipeline

/// Every rule of ``Settlement``: outcomes in, a plan out, no servers.
@Suite("Settlement rules")
struct SettlementTests {
    static let now: Int64 = 1_700_000_000_000
    static let facts = Settlement.Facts(
        app: "news", jobID: "job-1", environment: .production, usesOwnTopic: true, now: now, suspension: .seconds(60))

    static func token(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "cd", count: 24) + String(format: "%016x", n))
    }

    static func answer(
        _ status: Int, _ reason: APNsReason? = nil, timestamp: Int64? = nil, retryAfter: Duration? = nil, attempts: Int = 1
    ) -> SendResult {
        .response(APNsResponse(status: status, apnsID: nil, reason: reason, timestamp: timestamp, retryAfter: retryAfter, attempts: attempts))
    }

    /// The first send to token `n`, at position `100 + n` of the job's sent state.
    static func first(_ n: Int) -> Delivery { Delivery(token: token(n), position: UInt32(100 + n)) }

    static func resend(_ n: Int, attempts: Int = 2) -> Delivery {
        Delivery(resending: ResendEntry(jobID: "job-1", token: token(n), attempts: attempts, firstFailedAt: 5, lastReason: "timeout"))
    }

    @Test("accepted: counted and marked; a resend is completed and counted as resent")
    func accepted() {
        let plan = Settlement.plan([(Self.first(1), Self.answer(200)), (Self.resend(2), Self.answer(200))], facts: Self.facts)
        #expect(plan.records == [DeliveryOutcomeRecord(position: 101, counter: .accepted, countsAsSent: true)])
        #expect(plan.finishedResends.map(\.counter) == [.accepted])
        #expect(plan.workerCounts[.accepted] == 2)
        #expect(plan.workerCounts[.resent] == 1)
        #expect(plan.registryChanges.isEmpty && plan.deadLetters.isEmpty && plan.resends.isEmpty)
        #expect(plan.pauseJob == nil && plan.suspendApp == nil)
        #expect(plan.metrics[.init(outcome: "accepted", reason: "Success")] == 2)
    }

    @Test("410 removes the token with APNs's timestamp (or the answer's time)", arguments: [APNsReason.unregistered, .expiredToken])
    func gone(reason: APNsReason) {
        let plan = Settlement.plan(
            [(Self.first(1), Self.answer(410, reason, timestamp: 42)), (Self.first(2), Self.answer(410, reason))], facts: Self.facts)
        #expect(plan.registryChanges.map(\.invalidSince) == [42, Self.now])
        #expect(plan.registryChanges.allSatisfy { $0.reason == reason.rawValue && $0.environment == .production && $0.jobID == "job-1" })
        #expect(plan.records.map(\.counter) == [.failed(reason: reason.rawValue), .failed(reason: reason.rawValue)])
        #expect(plan.records.allSatisfy { $0.countsAsSent })
        #expect(plan.workerCounts[.tokensUnregistered] == 2)
        #expect(plan.pauseJob == nil && plan.deadLetters.isEmpty)
    }

    @Test("BadDeviceToken keeps the token aside (a registry change, never a removal) and is final")
    func badDeviceToken() {
        let plan = Settlement.plan([(Self.first(1), Self.answer(400, .badDeviceToken))], facts: Self.facts)
        #expect(plan.registryChanges.count == 1)
        #expect(plan.registryChanges.first?.reason == "BadDeviceToken")
        #expect(plan.registryChanges.first?.invalidSince == Self.now)
        #expect(plan.records == [DeliveryOutcomeRecord(position: 101, counter: .failed(reason: "BadDeviceToken"), countsAsSent: true)])
        #expect(plan.workerCounts[.tokensRejected] == 1)
        #expect(plan.pauseJob == nil)
    }

    @Test("DeviceTokenNotForTopic says something about the token only under the app's own topic")
    func notForTopic() {
        let own = Settlement.plan([(Self.first(1), Self.answer(400, .deviceTokenNotForTopic))], facts: Self.facts)
        #expect(own.registryChanges.map(\.reason) == ["DeviceTokenNotForTopic"])
        var extra = Self.facts
        extra.usesOwnTopic = false
        let other = Settlement.plan([(Self.first(1), Self.answer(400, .deviceTokenNotForTopic))], facts: extra)
        #expect(other.registryChanges.isEmpty, "under an extra topic the job's topic is at fault, not the token")
        #expect(other.records.map(\.counter) == [.failed(reason: "DeviceTokenNotForTopic")])
    }

    @Test(
        "a refusal of the whole request pauses the job and leaves the notification for its resume",
        arguments: [
            APNsReason.topicDisallowed, .badTopic, .invalidPushType, .badCertificateEnvironment, .payloadTooLarge, .forbidden,
            .badPriority, .missingTopic,
        ])
    func misconfiguration(reason: APNsReason) {
        let plan = Settlement.plan(
            [(Self.first(1), Self.answer(reason.documentedStatus!, reason)), (Self.resend(2), Self.answer(reason.documentedStatus!, reason))],
            facts: Self.facts)
        #expect(plan.pauseJob == reason.rawValue)
        #expect(plan.leftForResume == 2)
        #expect(plan.workerCounts[.leftForResume] == 2)
        #expect(plan.records.isEmpty && plan.finishedResends.isEmpty, "no outcome: sent again if the job resumes")
        #expect(plan.deadLetters.isEmpty && plan.resends.isEmpty && plan.registryChanges.isEmpty)
        #expect(plan.suspendApp == nil)
    }

    @Test("a refusal Apple does not document is dead-lettered and final")
    func undocumented() {
        let plan = Settlement.plan([(Self.resend(1, attempts: 3), Self.answer(400, .unknown("Odd")))], facts: Self.facts)
        #expect(plan.deadLetters.count == 1)
        #expect(plan.deadLetters.first?.reason == "Odd")
        #expect(plan.deadLetters.first?.status == 400)
        #expect(plan.deadLetters.first?.attempts == 4)
        #expect(plan.finishedResends.map(\.counter) == [.failed(reason: "Odd")])
        #expect(plan.workerCounts[.permanentFailures] == 1)
        #expect(plan.pauseJob == nil)
    }

    @Test("a refused credential suspends the app; the notification waits out the suspension in the resend buffer")
    func credential() {
        let plan = Settlement.plan(
            [(Self.first(1), Self.answer(403, .invalidProviderToken)), (Self.first(2), .failure(APNsError(.invalidCredential)))],
            facts: Self.facts)
        #expect(plan.suspendApp == "InvalidProviderToken")
        #expect(plan.resends.map(\.retryAfter) == [.seconds(60), .seconds(60)])
        #expect(plan.resends.map(\.reason) == ["InvalidProviderToken", "invalidCredential"])
        #expect(plan.records.isEmpty && plan.pauseJob == nil)
    }

    @Test("no answer, 429 and 5xx go to the resend buffer with their attempts; not sent keeps the count")
    func transient() {
        let plan = Settlement.plan(
            [
                (Self.first(1), .failure(APNsError(.timeout))),
                (Self.first(2), Self.answer(503, .serviceUnavailable, attempts: 2)),
                (Self.resend(3, attempts: 2), Self.answer(429, .tooManyRequests)),
                (Self.resend(4, attempts: 2), .notSent(reason: "worker-stopping")),
                (Self.first(5), .failure(APNsError(.shutdown))),
            ],
            facts: Self.facts)
        #expect(plan.resends.map(\.attempts) == [1, 2, 3, 2, 1])
        #expect(plan.resends.map(\.reason) == ["timeout", "ServiceUnavailable", "TooManyRequests", "worker-stopping", "shutdown"])
        #expect(plan.resends.map(\.firstFailedAt) == [Self.now, Self.now, 5, 5, Self.now])
        #expect(plan.resends.map(\.retryAfter) == [nil, nil, nil, nil, nil])
        #expect(plan.records.isEmpty && plan.finishedResends.isEmpty && plan.pauseJob == nil && plan.suspendApp == nil)
    }

    @Test("APNs's Retry-After goes with the notification to the resend buffer")
    func retryAfter() {
        let plan = Settlement.plan(
            [
                (Self.first(1), Self.answer(429, .tooManyRequests, retryAfter: .seconds(30))),
                (Self.first(2), Self.answer(503, .serviceUnavailable, retryAfter: .zero)),
                (Self.first(3), Self.answer(503, .serviceUnavailable)),
            ],
            facts: Self.facts)
        #expect(plan.resends.map(\.retryAfter) == [.seconds(30), .zero, nil])
        #expect(plan.resends.map(\.reason) == ["TooManyRequests", "ServiceUnavailable", "ServiceUnavailable"])
    }

    @Test("a cancelled job's notifications are counted as cancelled, never sent")
    func cancelled() {
        let plan = Settlement.plan([(Self.first(1), .cancelled), (Self.resend(2), .cancelled)], facts: Self.facts)
        #expect(plan.records == [DeliveryOutcomeRecord(position: 101, counter: .cancelled, countsAsSent: false)])
        #expect(plan.finishedResends == [Settlement.FinishedResend(entry: Self.resend(2).resendEntry!, counter: .cancelled, sent: false)])
        #expect(plan.workerCounts[.cancelledNotifications] == 2)
    }

    /// Failures of job-1 for tokens 1, 2, …, one per entry of `attempts`: "worker-stopping" when
    /// never sent (0 attempts), else "timeout".
    static func failures(attempts: [Int]) -> [ResendFailure] {
        attempts.enumerated().map { index, attempts in
            ResendFailure(
                jobID: "job-1", token: token(index + 1), attempts: attempts, firstFailedAt: 1, reason: attempts == 0 ? "worker-stopping" : "timeout")
        }
    }

    @Test("a first send another worker settled meanwhile goes to no buffer; resends from the buffer always go back")
    func resendsSettledElsewhere() {
        let failures = Self.failures(attempts: [1, 1, 0, 3])
        // Tokens 1–3 are first sends (positions 101–103); token 4 came from the buffer.
        let positions = [Self.token(1): 101, Self.token(2): 102, Self.token(3): 103] as [DeviceToken: UInt32]
        #expect(Settlement.positionsToCheck(failures, positions: positions) == [101, 102, 103])
        // Another worker took the chunk over and settled 102 and 103; 104 is no position of this batch.
        let selection = Settlement.resendsToSchedule(failures, positions: positions, marked: [102, 103, 104])
        #expect(selection.toSchedule == [failures[0], failures[3]])
        #expect(selection.settledElsewhere == 2)
        let none = Settlement.resendsToSchedule(failures, positions: positions, marked: [])
        #expect(none == Settlement.ResendSelection(toSchedule: failures, settledElsewhere: 0))
        // What is not buffered is not recorded as retried either.
        let after = Settlement.afterScheduling(selection.toSchedule, expired: [], positions: positions, facts: Self.facts)
        #expect(after.records == [DeliveryOutcomeRecord(position: 101, counter: .retried, countsAsSent: true)])
        #expect(after.retried == 1)
    }

    @Test("after scheduling: first sends are retried or dead-lettered; resends given up get their dead letters")
    func afterScheduling() {
        let failures = Self.failures(attempts: [1, 5, 0, 5])
        let expired = [failures[1].entry, failures[3].entry]
        let after = Settlement.afterScheduling(
            failures, expired: expired, positions: [Self.token(1): 101, Self.token(2): 102, Self.token(3): 103], facts: Self.facts)
        #expect(
            after.records == [
                DeliveryOutcomeRecord(position: 101, counter: .retried, countsAsSent: true),
                DeliveryOutcomeRecord(position: 102, counter: .deadLettered, countsAsSent: true),
                DeliveryOutcomeRecord(position: 103, counter: .retried, countsAsSent: false),
            ])
        #expect(after.retried == 2)
        #expect(after.deadLetters.map(\.reason) == ["resend-expired", "resend-expired"])
        #expect(after.deadLetters.map(\.token) == [Self.token(2).hex, Self.token(4).hex])
    }

    @Test("the resend buffer counts the resends it gives up on; a first send is counted by its marker")
    func countedByTheBuffer() {
        let failures = Self.failures(attempts: [1, 5, 0, 5])
        let counted = Settlement.countedByTheBuffer(failures, positions: [Self.token(1): 101, Self.token(3): 103])
        #expect(counted == [false, true, false, true])
    }
}
