import Redis
import Testing

@testable import PushStore

@Suite("Job schedule")
struct JobScheduleTests {
    @Test func schedulingIsIdempotentAndReplaces() async throws {
        let clock = ManualClock(1_000)
        try await withRedis { client async throws in
            let schedule = JobSchedule(client: client, lease: .seconds(30), clock: clock.function)
            try await schedule.schedule(ScheduledJob(jobID: "a", dueAt: 1_500, json: utf8("v1")))
            try await schedule.schedule(ScheduledJob(jobID: "a", dueAt: 2_000, json: utf8("v2")))
            #expect(try await schedule.count() == 1)
            clock.advance(by: 500)  // 1,500: the replaced due time no longer applies
            #expect(try await schedule.claimDue(limit: 10).isEmpty)
            clock.advance(by: 500)
            #expect(try await schedule.claimDue(limit: 10) == [ScheduledJob(jobID: "a", dueAt: 2_000 + 30_000, json: utf8("v2"))])
        }
    }

    @Test func aClaimIsALeaseThatComesBack() async throws {
        let clock = ManualClock(10_000)
        try await withRedis { client async throws in
            let schedule = JobSchedule(client: client, lease: .seconds(30), clock: clock.function)
            try await schedule.schedule(ScheduledJob(jobID: "a", dueAt: 10_000, json: utf8("{}")))
            #expect(try await schedule.claimDue(limit: 1).map(\.jobID) == ["a"])
            #expect(try await schedule.claimDue(limit: 1).isEmpty)
            #expect(try await schedule.count() == 1)
            clock.advance(by: 29_999)
            #expect(try await schedule.claimDue(limit: 1).isEmpty)
            clock.advance(by: 1)
            // The worker that claimed it died without removing it: it is claimed again.
            #expect(try await schedule.claimDue(limit: 1).map(\.jobID) == ["a"])
            try await schedule.remove(jobID: "a")
            try await schedule.remove(jobID: "a")
            #expect(try await schedule.count() == 0)
            clock.advance(by: 60_000)
            #expect(try await schedule.claimDue(limit: 1).isEmpty)
            #expect(try await client.send("EXISTS", .string(JobKeyspace.scheduleJobs)).int == 0)
        }
    }

    @Test func claimsTakeTheEarliestDueFirstUpToTheLimit() async throws {
        let clock = ManualClock(100)
        try await withRedis { client async throws in
            let schedule = JobSchedule(client: client, clock: clock.function)
            for (id, due) in [("c", 30), ("a", 10), ("future", 1_000), ("b", 20)] {
                try await schedule.schedule(ScheduledJob(jobID: id, dueAt: Int64(due), json: utf8(id)))
            }
            #expect(try await schedule.claimDue(limit: 2).map(\.jobID) == ["a", "b"])
            #expect(try await schedule.claimDue(limit: 0).isEmpty)
            #expect(try await schedule.claimDue(limit: 10).map(\.json) == [utf8("c")])
            #expect(try await schedule.count() == 4)
        }
    }

    @Test func twoClaimersNeverGetTheSameJob() async throws {
        let clock = ManualClock(5_000)
        try await withRedis { client async throws in
            let one = JobSchedule(client: client, clock: clock.function)
            let two = JobSchedule(client: client, clock: clock.function)
            for number in 0..<200 {
                try await one.schedule(ScheduledJob(jobID: "job-\(number)", dueAt: Int64(number), json: utf8("\(number)")))
            }
            @Sendable func drain(_ schedule: JobSchedule) async throws -> [String] {
                var all: [String] = []
                while case let batch = try await schedule.claimDue(limit: 3), !batch.isEmpty {
                    all += batch.map(\.jobID)
                }
                return all
            }
            async let a = drain(one)
            async let b = drain(two)
            let (fromOne, fromTwo) = try await (a, b)
            #expect(Set(fromOne).isDisjoint(with: Set(fromTwo)))
            #expect(fromOne.count + fromTwo.count == 200)
            #expect(Set(fromOne + fromTwo) == Set((0..<200).map { "job-\($0)" }))
        }
    }

    @Test func invalidArgumentsNameTheirField() async throws {
        try await withRedis { client async throws in
            let schedule = JobSchedule(client: client)
            #expect(await registryError { try await schedule.schedule(ScheduledJob(jobID: "{x}", dueAt: 0, json: [])) }?.field == "jobID")
            #expect(await registryError { try await schedule.schedule(ScheduledJob(jobID: "x", dueAt: -1, json: [])) }?.field == "dueAt")
            #expect(await registryError { try await schedule.remove(jobID: "") }?.field == "jobID")
            #expect(await registryError { try await schedule.claimDue(limit: -1) }?.field == "limit")
            #expect(try await schedule.count() == 0)
        }
    }
}
