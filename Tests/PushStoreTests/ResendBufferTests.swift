import APNsCore
import FlowControl
import Redis
import Testing

@testable import PushStore

@Suite("Resend buffer")
struct ResendBufferTests {
    let app = "resend"

    /// The due time of an entry, read from the sorted set.
    func dueTime(_ client: any RedisCommands, app: String, jobID: String, token: DeviceToken) async throws -> Int64? {
        let reply = try await client.send("ZSCORE", .string(ResendKeyspace(app: app).due), .string(ResendKeyspace.member(jobID: jobID, token: token)))
        return reply.string.flatMap(Double.init).map { Int64($0) }
    }

    func failure(_ number: Int, job: String = "job", attempts: Int, firstFailedAt: Int64, retryAfter: Duration? = nil) -> ResendFailure {
        ResendFailure(
            jobID: job, token: token(number), attempts: attempts, firstFailedAt: firstFailedAt, reason: "ServiceUnavailable", retryAfter: retryAfter)
    }

    @Test func backoffDoublesWithinTheJitterBounds() async throws {
        let clock = ManualClock()
        let policy = ResendPolicy(maxAttempts: 10, baseDelay: .seconds(1), maxDelay: .seconds(600), jitter: 0.2)
        try await withRedis { client async throws in
            let low = ResendBuffer(client: client, policy: policy, clock: clock.function, random: { 0 })
            let high = ResendBuffer(client: client, policy: policy, clock: clock.function, random: { 0.999 })
            for attempts in 1...6 {
                let expired = try await low.schedule(app: "low", [failure(attempts, attempts: attempts, firstFailedAt: clock.now)])
                #expect(expired.isEmpty)
                _ = try await high.schedule(app: "high", [failure(attempts, attempts: attempts, firstFailedAt: clock.now)])
                let nominal = 1_000.0 * Double(1 << (attempts - 1))
                let lowDelay = try #require(try await dueTime(client, app: "low", jobID: "job", token: token(attempts))) - clock.now
                let highDelay = try #require(try await dueTime(client, app: "high", jobID: "job", token: token(attempts))) - clock.now
                // random 0 gives the bottom of [1 - jitter, 1 + jitter), 0.999 almost the top.
                #expect(abs(Double(lowDelay) - nominal * 0.8) <= 1, "attempt \(attempts): \(lowDelay)")
                #expect(Double(highDelay) >= nominal * (1 + 0.2 * (2 * 0.999 - 1)) - 1, "attempt \(attempts): \(highDelay)")
                #expect(Double(highDelay) <= nominal * 1.2, "attempt \(attempts): \(highDelay)")
            }
        }
    }

    @Test func delayIsCappedJitterIncluded() async throws {
        let clock = ManualClock()
        let policy = ResendPolicy(maxAttempts: 20, baseDelay: .seconds(1), maxDelay: .seconds(5), jitter: 0.2)
        try await withRedis { client async throws in
            let high = ResendBuffer(client: client, policy: policy, clock: clock.function, random: { 0.999 })
            let low = ResendBuffer(client: client, policy: policy, clock: clock.function, random: { 0 })
            _ = try await high.schedule(
                app: app, [failure(1, attempts: 4, firstFailedAt: clock.now), failure(2, attempts: 15, firstFailedAt: clock.now)])
            _ = try await low.schedule(app: app, [failure(3, attempts: 15, firstFailedAt: clock.now)])
            // 1 s * 2^3 = 8 s and 1 s * 2^14 are both above the 5 s cap, jitter or not.
            #expect(try await dueTime(client, app: app, jobID: "job", token: token(1)) == clock.now + 5_000)
            #expect(try await dueTime(client, app: app, jobID: "job", token: token(2)) == clock.now + 5_000)
            // The jitter still spreads below the cap.
            #expect(try await dueTime(client, app: app, jobID: "job", token: token(3)) == clock.now + 4_000)
        }
    }

    @Test func retryAfterWinsWhenLonger() async throws {
        let clock = ManualClock()
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client, clock: clock.function, random: { 0.5 })
            _ = try await buffer.schedule(
                app: app,
                [
                    failure(1, attempts: 1, firstFailedAt: clock.now, retryAfter: .seconds(120)),
                    failure(2, attempts: 1, firstFailedAt: clock.now, retryAfter: .milliseconds(100)),
                    failure(3, attempts: 1, firstFailedAt: clock.now, retryAfter: .microseconds(1_200_001)),
                ]
            )
            #expect(try await dueTime(client, app: app, jobID: "job", token: token(1)) == clock.now + 120_000)
            // Shorter than the backoff (1 s at random 0.5): the backoff wins.
            #expect(try await dueTime(client, app: app, jobID: "job", token: token(2)) == clock.now + 1_000)
            // Rounded up: never due before the server's Retry-After.
            #expect(try await dueTime(client, app: app, jobID: "job", token: token(3)) == clock.now + 1_201)
        }
    }

    @Test func entriesExpireByAttempts() async throws {
        let clock = ManualClock()
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client, policy: ResendPolicy(maxAttempts: 3), clock: clock.function)
            let first = clock.now
            #expect(try await buffer.schedule(app: app, [failure(1, attempts: 2, firstFailedAt: first)]).isEmpty)
            #expect(try await buffer.depth(app: app) == 1)
            let expired = try await buffer.schedule(
                app: app, [failure(1, attempts: 3, firstFailedAt: first), failure(2, attempts: 1, firstFailedAt: first)])
            #expect(expired == [ResendEntry(jobID: "job", token: token(1), attempts: 3, firstFailedAt: first, lastReason: "ServiceUnavailable")])
            // The expired entry's old due time and value are gone; the other one waits.
            #expect(try await buffer.depth(app: app) == 1)
            #expect(try await dueTime(client, app: app, jobID: "job", token: token(1)) == nil)
            #expect(try await client.send("HLEN", .string(ResendKeyspace(app: app).entries)).int == 1)
        }
    }

    @Test func entriesExpireByAge() async throws {
        let clock = ManualClock()
        try await withRedis { client async throws in
            let policy = ResendPolicy(maxAge: .seconds(3_600))
            let buffer = ResendBuffer(client: client, policy: policy, clock: clock.function)
            let tooOld = clock.now - 3_600_000
            let young = clock.now - 3_599_999
            let expired = try await buffer.schedule(
                app: app, [failure(1, attempts: 1, firstFailedAt: tooOld), failure(2, attempts: 1, firstFailedAt: young)])
            #expect(expired.map(\.token) == [token(1)])
            #expect(try await buffer.depth(app: app) == 1)
            // The same entry a millisecond later is expired too, and removed.
            clock.advance(by: 1)
            #expect(try await buffer.schedule(app: app, [failure(2, attempts: 2, firstFailedAt: young)]).map(\.token) == [token(2)])
            #expect(try await buffer.depth(app: app) == 0)
        }
    }

    @Test func aClaimHidesEntriesForTheLease() async throws {
        let clock = ManualClock()
        let policy = ResendPolicy(baseDelay: .seconds(1), lease: .seconds(30), jitter: 0)
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client, policy: policy, clock: clock.function)
            let first = clock.now
            _ = try await buffer.schedule(app: app, (1...3).map { failure($0, attempts: 1, firstFailedAt: first) })
            #expect(try await buffer.claimDue(app: app, limit: 10).isEmpty)  // due in 1 s

            clock.advance(by: 1_000)
            let claimed = try await buffer.claimDue(app: app, limit: 10)
            #expect(
                Set(claimed)
                    == Set(
                        (1...3).map {
                            ResendEntry(jobID: "job", token: token($0), attempts: 1, firstFailedAt: first, lastReason: "ServiceUnavailable")
                        }))
            #expect(try await buffer.claimDue(app: app, limit: 10).isEmpty)
            #expect(try await buffer.depth(app: app) == 3)
            #expect(try await buffer.nextDueTime(app: app) == clock.now + 30_000)

            clock.advance(by: 29_999)
            #expect(try await buffer.claimDue(app: app, limit: 10).isEmpty)
            clock.advance(by: 1)
            // The claimer died: the entries come back, still at 1 attempt.
            #expect(Set(try await buffer.claimDue(app: app, limit: 10)) == Set(claimed))
        }
    }

    @Test func claimsTakeTheEarliestFirstUpToTheLimit() async throws {
        let clock = ManualClock()
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client, policy: ResendPolicy(maxAttempts: 10, jitter: 0), clock: clock.function)
            // Attempts 1...4 are due after 1, 2, 4 and 8 s.
            _ = try await buffer.schedule(app: app, (1...4).reversed().map { failure($0, attempts: $0, firstFailedAt: clock.now) })
            clock.advance(by: 10_000)
            #expect(try await buffer.claimDue(app: app, limit: 2).map(\.token) == [token(1), token(2)])
            #expect(try await buffer.claimDue(app: app, limit: 0).isEmpty)
            #expect(try await buffer.claimDue(app: app, limit: 5).map(\.token) == [token(3), token(4)])
        }
    }

    @Test func twoClaimersNeverGetTheSameEntry() async throws {
        let clock = ManualClock()
        try await withRedis { client async throws in
            let one = ResendBuffer(client: client, policy: ResendPolicy(jitter: 0), clock: clock.function)
            let two = ResendBuffer(client: client, policy: ResendPolicy(jitter: 0), clock: clock.function)
            _ = try await one.schedule(app: app, (0..<300).map { failure($0, attempts: 1, firstFailedAt: clock.now) })
            clock.advance(by: 1_000)
            @Sendable func drain(_ buffer: ResendBuffer) async throws -> [ResendEntry] {
                var all: [ResendEntry] = []
                while case let batch = try await buffer.claimDue(app: app, limit: 7), !batch.isEmpty {
                    all += batch
                }
                return all
            }
            async let a = drain(one)
            async let b = drain(two)
            let (fromOne, fromTwo) = try await (a, b)
            #expect(Set(fromOne).isDisjoint(with: Set(fromTwo)))
            #expect(Set(fromOne.map(\.token) + fromTwo.map(\.token)) == Set((0..<300).map { token($0) }))
            #expect(fromOne.count + fromTwo.count == 300)
        }
    }

    @Test func completeIsTrueOnceThenFalse() async throws {
        let clock = ManualClock()
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client, clock: clock.function)
            let entries = [failure(1, attempts: 1, firstFailedAt: clock.now).entry, failure(2, attempts: 1, firstFailedAt: clock.now).entry]
            _ = try await buffer.schedule(
                app: app, [failure(1, attempts: 1, firstFailedAt: clock.now), failure(2, attempts: 1, firstFailedAt: clock.now)])
            #expect(try await buffer.complete(app: app, jobID: "job", [entries[0], entries[0]], counting: [[], []]).removed == [true, false])
            #expect(try await buffer.complete(app: app, jobID: "job", entries, counting: [[], []]).removed == [false, true])
            #expect(try await buffer.complete(app: app, jobID: "job", entries, counting: [[], []]).removed == [false, false])
            #expect(try await buffer.complete(app: app, jobID: "job", [], counting: []).removed == [])
            #expect(try await buffer.depth(app: app) == 0)
            #expect(try await client.send("EXISTS", .string(ResendKeyspace(app: app).entries)).int == 0)
            // Nothing counted, nothing tallied.
            #expect(try await client.send("EXISTS", .string(ResendKeyspace(app: app).tallies)).int == 0)
        }
    }

    @Test func aCompletionTalliesTheOutcomesOfTheEntriesItRemovedAndNothingElse() async throws {
        let clock = ManualClock()
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client, clock: clock.function)
            _ = try await buffer.schedule(app: app, (1...4).map { failure($0, attempts: 1, firstFailedAt: clock.now) })
            let entries = (1...5).map { failure($0, attempts: 1, firstFailedAt: clock.now).entry }
            // Entry 5 was never buffered (another completion ended it): not counted.
            let first = try await buffer.complete(
                app: app, jobID: "job", entries,
                counting: [[.accepted, .sent], [.accepted, .sent], [.failed(reason: "BadDeviceToken"), .sent], [], [.accepted, .sent]])
            #expect(first.removed == [true, true, true, true, false])
            let tally = try #require(first.tally)
            #expect(tally.jobID == "job")
            #expect(tally.counters == [.accepted: 2, .sent: 3, .failed(reason: "BadDeviceToken"): 1])
            // The script wrote the same tally the caller was answered.
            clock.advance(by: 31_000)
            #expect(try await buffer.pendingTallies(app: app, writtenBefore: .seconds(30)) == [tally])
            #expect(try await buffer.pendingTallies(app: app, writtenBefore: .seconds(32)).isEmpty)
            // Completing them again removes nothing and tallies nothing.
            #expect(try await buffer.complete(app: app, jobID: "job", entries, counting: entries.map { _ in [.accepted] }).tally == nil)
            try await buffer.forget(tally, app: app)
            #expect(try await buffer.pendingTallies(app: app, writtenBefore: .zero).isEmpty)
            #expect(try await client.send("HLEN", .string(ResendKeyspace(app: app).tallyValues)).int == 0)
        }
    }

    @Test func resendsGivenUpAreTalliedOncePerJobWhenTheBufferHeldThem() async throws {
        let clock = ManualClock()
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client, policy: ResendPolicy(maxAttempts: 3), clock: clock.function)
            let first = clock.now
            // Entries 1-3 of job "job" and 1 of job "other" are buffered; 4 of "job" never was.
            _ = try await buffer.schedule(
                app: app,
                (1...3).map { failure($0, attempts: 2, firstFailedAt: first) } + [failure(1, job: "other", attempts: 2, firstFailedAt: first)])
            let givenUp =
                (1...4).map { failure($0, attempts: 3, firstFailedAt: first) } + [failure(1, job: "other", attempts: 3, firstFailedAt: first)]
            // Entry 3 is given up uncounted (a first send counted by its marker); 5 is scheduled.
            let answer = try await buffer.schedule(
                app: app, givenUp + [failure(5, attempts: 1, firstFailedAt: first)], countingGivenUp: [true, true, false, true, true, false])
            #expect(answer.expired.map(\.token) == [token(1), token(2), token(3), token(4), token(1)])
            #expect(answer.tallies.map(\.jobID) == ["job", "other"])
            #expect(answer.tallies.map(\.counters) == [[.deadLettered: 2], [.deadLettered: 1]])
            #expect(try await buffer.depth(app: app) == 1)
            // The script wrote the tallies it answered, for a drainer to find if the caller dies.
            clock.advance(by: 31_000)
            let pending = try await buffer.pendingTallies(app: app, writtenBefore: .seconds(30))
            #expect(pending.sorted { $0.jobID < $1.jobID } == answer.tallies)
            // Given up again (a retry after a lost reply): nothing is there, nothing is tallied.
            let again = try await buffer.schedule(app: app, givenUp, countingGivenUp: givenUp.map { _ in true })
            #expect(again.expired.count == 5)
            #expect(again.tallies.isEmpty)
            #expect(await registryError { try await buffer.schedule(app: app, givenUp, countingGivenUp: [true]) }?.field == "countingGivenUp")
        }
    }

    @Test func expediteMovesWaitingEntriesToNowAndNothingElse() async throws {
        let clock = ManualClock()
        let policy = ResendPolicy(baseDelay: .seconds(1), lease: .seconds(30), jitter: 0)
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client, policy: policy, clock: clock.function)
            // Online sends: due after their fallback delay (10 s).
            _ = try await buffer.schedule(app: app, (1...3).map { failure($0, attempts: 0, firstFailedAt: clock.now, retryAfter: .seconds(10)) })
            #expect(try await buffer.claimDue(app: app, limit: 10).isEmpty)
            #expect(
                try await buffer.complete(app: app, jobID: "job", [failure(3, attempts: 0, firstFailedAt: clock.now).entry], counting: [[]]).removed
                    == [true])
            clock.advance(by: 2_000)
            let handedBack = [1, 3].map { failure($0, attempts: 0, firstFailedAt: 0).entry }
            // Entry 1 moves to now; entry 3, completed, is not added back.
            #expect(try await buffer.expedite(app: app, handedBack) == 1)
            #expect(try await dueTime(client, app: app, jobID: "job", token: token(1)) == clock.now)
            #expect(try await dueTime(client, app: app, jobID: "job", token: token(3)) == nil)
            #expect(try await buffer.claimDue(app: app, limit: 10).map(\.token) == [token(1)])
            // Entry 2 still waits for its own time; once due, expediting leaves it where it is.
            #expect(try await buffer.claimDue(app: app, limit: 10).isEmpty)
            clock.advance(by: 9_000)
            let due = try await dueTime(client, app: app, jobID: "job", token: token(2))
            #expect(try await buffer.expedite(app: app, [failure(2, attempts: 0, firstFailedAt: 0).entry]) == 0)
            #expect(try await dueTime(client, app: app, jobID: "job", token: token(2)) == due)
            #expect(try await buffer.expedite(app: app, []) == 0)
        }
    }

    @Test func theBufferLeavesRedisAfterItsRetentionFromTheLastSchedule() async throws {
        let clock = ManualClock()
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client, clock: clock.function)
            let keys = ResendKeyspace(app: app)
            _ = try await buffer.schedule(app: app, [failure(1, attempts: 1, firstFailedAt: clock.now)])
            let retention = ResendPolicy().retention.wholeMilliseconds
            for key in [keys.due, keys.entries] {
                let ttl = try await client.pttl(key)
                #expect(ttl > retention - 60_000 && ttl <= retention, "\(key): \(ttl) ms")
            }
            // Claims and completions do not keep it; a schedule that only expires entries
            // still renews what is left.
            _ = try await client.send("PEXPIRE", .string(keys.due), "100000")
            _ = try await client.send("PEXPIRE", .string(keys.entries), "100000")
            _ = try await buffer.schedule(app: app, [failure(2, attempts: 9, firstFailedAt: clock.now)])
            #expect(try await client.pttl(keys.due) > retention - 60_000)
            #expect(try await client.pttl(keys.entries) > retention - 60_000)
            #expect(try await buffer.depth(app: app) == 1)
        }
    }

    @Test func retentionCoversTheLongestAnEntryCanWait() {
        #expect(ResendPolicy().retention == .seconds(7 * 24 * 3_600))
        let patient = ResendPolicy(maxDelay: .seconds(3_600), maxAge: .seconds(10 * 24 * 3_600), lease: .seconds(60))
        #expect(patient.retention == .seconds(10 * 24 * 3_600 + 3_600 + 60))
    }

    @Test func depthAndNextDueTime() async throws {
        let clock = ManualClock()
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client, policy: ResendPolicy(maxAttempts: 10, jitter: 0), clock: clock.function)
            #expect(try await buffer.depth(app: app) == 0)
            #expect(try await buffer.nextDueTime(app: app) == nil)
            _ = try await buffer.schedule(
                app: app, [failure(1, attempts: 3, firstFailedAt: clock.now), failure(2, attempts: 2, firstFailedAt: clock.now)])
            _ = try await buffer.schedule(app: "other", [failure(3, attempts: 1, firstFailedAt: clock.now)])
            #expect(try await buffer.depth(app: app) == 2)
            #expect(try await buffer.nextDueTime(app: app) == clock.now + 2_000)
            // Re-scheduling the same token of the same job replaces its entry.
            _ = try await buffer.schedule(app: app, [failure(2, attempts: 4, firstFailedAt: clock.now)])
            #expect(try await buffer.depth(app: app) == 2)
            #expect(try await buffer.nextDueTime(app: app) == clock.now + 4_000)
        }
    }

    @Test func jobIDsWithSpacesRoundTrip() async throws {
        let clock = ManualClock()
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client, policy: ResendPolicy(jitter: 0), clock: clock.function)
            let failure = ResendFailure(
                jobID: "job with spaces", token: token(7), attempts: 2, firstFailedAt: clock.now, reason: "reason with spaces")
            #expect(try await buffer.schedule(app: app, [failure]).isEmpty)
            clock.advance(by: 2_000)
            #expect(try await buffer.claimDue(app: app, limit: 1) == [failure.entry])
        }
    }

    @Test func invalidArgumentsNameTheirField() async throws {
        try await withRedis { client async throws in
            let buffer = ResendBuffer(client: client)
            let good = ResendFailure(jobID: "job", token: token(1), attempts: 1, firstFailedAt: 0, reason: "timeout")
            var negativeAttempts = good
            negativeAttempts.attempts = -1
            var badJob = good
            badJob.jobID = "{job}"
            var negativeRetry = good
            negativeRetry.retryAfter = .seconds(-1)
            var negativeTime = good
            negativeTime.firstFailedAt = -1
            #expect(await registryError { try await buffer.schedule(app: "bad app", [good]) }?.field == "app")
            #expect(await registryError { try await buffer.schedule(app: app, [good, negativeAttempts]) }?.field == "failures[1].attempts")
            #expect(await registryError { try await buffer.schedule(app: app, [badJob]) }?.field == "failures[0].jobID")
            #expect(await registryError { try await buffer.schedule(app: app, [negativeRetry]) }?.field == "failures[0].retryAfter")
            #expect(await registryError { try await buffer.schedule(app: app, [negativeTime]) }?.field == "failures[0].firstFailedAt")
            #expect(await registryError { try await buffer.claimDue(app: app, limit: -1) }?.field == "limit")
            #expect(
                await registryError { try await buffer.complete(app: app, jobID: badJob.jobID, [badJob.entry], counting: [[]]) }?.field == "jobID")
            #expect(await registryError { try await buffer.complete(app: app, jobID: "job", [good.entry], counting: []) }?.field == "counting")
            var otherJob = good
            otherJob.jobID = "other"
            #expect(
                await registryError { try await buffer.complete(app: app, jobID: "job", [good.entry, otherJob.entry], counting: [[], []]) }?.field
                    == "entries[1].jobID")
            #expect(await registryError { try await buffer.pendingTallies(app: app, writtenBefore: .zero, limit: 0) }?.field == "limit")
            // Nothing of the refused calls was written.
            #expect(try await buffer.depth(app: app) == 0)
        }
    }

    @Test func policyDelayFormula() {
        let policy = ResendPolicy(baseDelay: .milliseconds(500), maxDelay: .seconds(60), jitter: 0.5)
        #expect(policy.delayMilliseconds(afterAttempts: 1, random: 0.5) == 500)
        #expect(policy.delayMilliseconds(afterAttempts: 3, random: 0.5) == 2_000)
        #expect(policy.delayMilliseconds(afterAttempts: 3, random: 0) == 1_000)
        #expect(policy.delayMilliseconds(afterAttempts: 1_000, random: 0.5) == 60_000)
        #expect(policy.isExpired(attempts: 5, firstFailedAt: 0, now: 0))
        #expect(policy.isExpired(attempts: 4, firstFailedAt: 0, now: 3_599_999) == false)
        #expect(policy.isExpired(attempts: 4, firstFailedAt: 0, now: 3_600_000))
    }
}
