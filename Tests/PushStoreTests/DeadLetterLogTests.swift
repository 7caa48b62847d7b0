import APNsCore
import Foundation
import PushCore
import Redis
import Testing

@testable import PushStore

@Suite("Dead-letter log")
struct DeadLetterLogTests {
    /// A notification's letter: listed under its job.
    static func notification(_ n: Int, job: String = "job-1", app: String = "news") -> DeadLetter {
        DeadLetter(
            reason: "resend-expired", message: "letter \(n)", app: app, jobID: job, token: token(n).hex, attempts: 5,
            deadLetteredAt: 1_700_000_000_000 + Int64(n))
    }

    /// An unprocessable message's letter: listed under its app, whatever job it names.
    static func message(_ n: Int, app: String = "news", job: String? = nil, original: Data = Data("{}".utf8)) -> DeadLetter {
        DeadLetter(
            reason: "malformed-json", message: "message \(n)", field: "$", app: app, jobID: job,
            source: DeadLetter.Source(topic: "push.jobs", partition: 0, offset: Int64(n)), original: original,
            deadLetteredAt: 1_700_000_000_000 + Int64(n))
    }

    @Test("a job keeps its newest 1,000 letters, newest first, however they come")
    func capKeepsTheNewest() async throws {
        try await withRedis { client async throws in
            let log = DeadLetterLog(client: client)
            let letters = (0..<1_100).map { Self.notification($0) }
            try await log.record(Array(letters[0..<600]))
            try await log.record(Array(letters[600..<1_050]))
            try await log.record(Array(letters[1_050...]))
            let kept = try await log.letters(jobID: "job-1", limit: 1_000)
            #expect(kept.count == DeadLetterLog.maxLetters)
            #expect(kept.first == letters[1_099] && kept.last == letters[100])
            #expect(kept == Array(letters[100...].reversed()))
            #expect(try await client.send("LLEN", .string(JobKeyspace(jobID: "job-1").deadLetters)).int == 1_000)
            #expect(try await log.letters(jobID: "job-1", limit: 2) == [letters[1_099], letters[1_098]])

            // More than a list keeps in one call: the newest of them.
            let many = (2_000..<3_500).map { Self.notification($0, job: "job-2") }
            try await log.record(many)
            #expect(try await log.letters(jobID: "job-2", limit: 1_000) == Array(many.suffix(1_000).reversed()))
        }
    }

    @Test("a notification's letter is its job's, any other letter its app's; apps and jobs apart")
    func jobsAndApps() async throws {
        try await withRedis { client async throws in
            let log = DeadLetterLog(client: client)
            let malformed = Self.message(1, job: "never-stored")
            let garbage = Self.message(2)
            let letters = [Self.notification(1), malformed, Self.notification(2, job: "job-2"), garbage, Self.notification(3, app: "shop")]
            try await log.record(letters)
            #expect(try await log.letters(jobID: "job-1", limit: 10) == [Self.notification(3, app: "shop"), Self.notification(1)])
            #expect(try await log.letters(jobID: "job-2", limit: 10) == [Self.notification(2, job: "job-2")])
            #expect(
                try await log.letters(app: "news", limit: 10) == [garbage, malformed],
                "a message's letter stays with its app even when it names a job")
            #expect(try await log.letters(jobID: "never-stored", limit: 10).isEmpty)
            #expect(try await log.letters(app: "shop", limit: 10).isEmpty)
            #expect(try await log.letters(app: "other", limit: 10).isEmpty)
            #expect(try await client.keyCount() == 3, "job-1, job-2 and news: \(letters.count) letters in three lists")
        }
    }

    @Test("every list expires a job's TTL after its last letter")
    func timeToLive() async throws {
        try await withRedis { client async throws in
            let week: Int64 = 7 * 24 * 3_600_000
            try await DeadLetterLog(client: client).record([Self.notification(1), Self.message(1)])
            for key in [JobKeyspace(jobID: "job-1").deadLetters, DeadLetterLog.key(app: "news")] {
                let left = try #require(try await client.send("PTTL", .string(key)).int, "\(key)")
                #expect(left > week - 60_000 && left <= week, "\(key): \(left) ms")
            }
            let short = DeadLetterLog(client: client, timeToLive: .seconds(60))
            try await short.record([Self.message(2, app: "shop")])
            let left = try #require(try await client.send("PTTL", .string(DeadLetterLog.key(app: "shop"))).int)
            #expect(left > 50_000 && left <= 60_000)
        }
    }

    @Test("a letter is stored in at most 4,096 bytes: a large original keeps its first bytes and says its size")
    func largeOriginalIsCut() async throws {
        try await withRedis { client async throws in
            let log = DeadLetterLog(client: client)
            let original = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            let letter = Self.message(1, original: original)
            try await log.record([letter])
            let stored = try #require(try await client.send("LINDEX", .string(DeadLetterLog.key(app: "news")), "0").bytes)
            #expect(stored.count <= DeadLetterLog.maxLetterBytes && stored.count > DeadLetterLog.maxLetterBytes - 16)
            let read = try #require(try await log.letters(app: "news", limit: 1).first)
            #expect(read.originalSize == original.count)
            let kept = try #require(read.original)
            #expect(kept.count > 2_500 && kept == original.prefix(kept.count))
            #expect(read.reason == letter.reason && read.source == letter.source && read.deadLetteredAt == letter.deadLetteredAt)
        }
    }

    @Test("refusals: a letter with no list, an invalid job id or app, a limit below 1, an entry that is no letter")
    func refusals() async throws {
        try await withRedis { client async throws in
            let log = DeadLetterLog(client: client)
            var homeless = Self.message(1)
            homeless.app = nil
            let noList = await registryError { try await log.record([Self.notification(1), homeless]) }
            #expect(noList?.field == "letters[1]")
            let badJob = await registryError { try await log.record([Self.notification(1, job: "a{b}")]) }
            #expect(badJob?.field == "letters[0].jobID")
            let badApp = await registryError { try await log.record([Self.message(1, app: "a:b")]) }
            #expect(badApp?.field == "letters[0].app" && badApp?.code == .invalidApp)
            #expect(try await client.keyCount() == 0, "nothing of a refused call is written")
            #expect(await registryError { try await log.letters(app: "news", limit: 0) }?.field == "limit")

            try await log.record([Self.notification(1)])
            _ = try await client.send("LPUSH", .string(JobKeyspace(jobID: "job-1").deadLetters), "not a letter")
            let unreadable = await registryError { try await log.letters(jobID: "job-1", limit: 10) }
            #expect(unreadable?.code == .unexpectedReply)
        }
    }
}
