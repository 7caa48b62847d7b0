import APNsCore
import APNsSimulator
import Foundation
import PipelineTestSupport
import PushCore
import PushJobs
import PushPipeline
import PushStore
import Synchronization
import Testing

/// Jobs sent at each device's own time, end to end on the embedded stack with a worker whose
/// clock the test moves forward: devices in three time zones, or with three histories, get the
/// notification in their own slot, once each, and the report says what waited and what went.
@Suite("Sends at each device's own time", .serialized)
struct DeviceTimeSendTests {
    typealias Stack = PipelineStack

    /// The system clock plus an offset the test moves.
    final class MovedClock: Sendable {
        let offset = Mutex<Int64>(0)
        var function: @Sendable () -> Int64 { { [self] in StoreClock.system() + offset.withLock { $0 } } }
        var now: Int64 { function() }
        /// Moves the clock to `instant` plus a second, when that is ahead.
        func move(to instant: Int64) {
            let ahead = instant + 1_000 - now
            if ahead > 0 { offset.withLock { $0 += ahead } }
        }
    }

    static let quarter: Int64 = 900_000

    /// Accepted notifications per token at the simulator.
    static func accepted(_ stack: Stack, _ tokens: [DeviceToken]) async throws -> [Int] {
        let seen = try await stack.simulator.counters().acceptedPerToken
        return tokens.map { seen[$0.hex] ?? 0 }
    }

    @Test("local time: devices in three zones get the notification at that time of their own day, once each")
    func localTime() async throws {
        let zones = ["Asia/Tokyo", "America/New_York", nil]
        let groups = zones.indices.map { group in (0..<20).map { Stack.token(group * 100 + $0) } }
        try await Stack.with { stack in
            for (zone, tokens) in zip(zones, groups) {
                try await stack.registry.bind(
                    tokens.map { DeviceRegistration(token: $0, environment: .sandbox, registeredAt: 1_000, timeZone: zone) }, app: Stack.app)
            }
            let clock = MovedClock()
            try await stack.withWorker(clock: clock.function) { _ in
                // A local time two hours from now in UTC (the app's zone): each zone's next one
                // is somewhere in the next 24 hours.
                var utc = Calendar(identifier: .gregorian)
                utc.timeZone = TimeZone(identifier: "UTC")!
                let twoHours = utc.dateComponents([.hour], from: Date(timeIntervalSince1970: Double(clock.now) / 1000 + 7_200))
                let time = String(format: "%02d:30", twoHours.hour!)
                var job = Stack.job(id: "local-time", audience: .broadcast)
                job.sendAtDevice = .localTime(hour: twoHours.hour!, minute: 30)
                let published = clock.now
                try await stack.publish(job)

                // Expected: the next `time` in each zone, computed here with Foundation's calendar.
                let expected: [Int64] = zones.map { zone in
                    var calendar = Calendar(identifier: .gregorian)
                    calendar.timeZone = TimeZone(identifier: zone ?? "UTC")!
                    let date = calendar.nextDate(
                        after: Date(timeIntervalSince1970: Double(published) / 1000), matching: DateComponents(hour: twoHours.hour!, minute: 30),
                        matchingPolicy: .nextTime)!
                    return Int64(date.timeIntervalSince1970 * 1000)
                }
                let report = try await eventually("the job parked for its three slots") {
                    try await stack.report("local-time")
                } until: {
                    $0.expanded == 60 && $0.sendTimes.count == 3
                }
                #expect(report.sendTimes.map(\.at) == expected.sorted(), "\(time): the slots of the three zones")
                #expect(report.sendTimes.allSatisfy { $0.scheduled == 20 && $0.released == 0 })
                #expect(try await Self.accepted(stack, groups.flatMap { $0 }).allSatisfy { $0 == 0 }, "nothing before its time")

                // The clock comes to each slot in turn: that zone's devices get it, the later ones not yet.
                for (instant, group) in zip(expected, groups).sorted(by: { $0.0 < $1.0 }) {
                    clock.move(to: instant)
                    _ = try await eventually("the devices of the slot at \(instant)") {
                        try await Self.accepted(stack, group)
                    } until: {
                        $0.allSatisfy { $0 == 1 }
                    }
                    for (other, tokens) in zip(expected, groups) where other > instant {
                        #expect(try await Self.accepted(stack, tokens).allSatisfy { $0 == 0 }, "a later zone waits")
                    }
                }
                let final = try await eventually("the job complete") {
                    try await stack.report("local-time")
                } until: {
                    $0.isComplete
                }
                #expect(final.accepted == 60 && final.sendTimes.allSatisfy { $0.released == $0.scheduled })
                #expect(try await Self.accepted(stack, groups.flatMap { $0 }).allSatisfy { $0 == 1 }, "once each")
            }
        }
    }

    @Test("best hour: devices with three histories go out at their own hour; without one, at the app's best")
    func bestHour() async throws {
        let groups = (0..<3).map { group in (0..<20).map { Stack.token(group * 100 + $0) } }
        try await Stack.with { stack in
            try await stack.register(groups.flatMap { $0 })
            let clock = MovedClock()
            let hour: Int64 = 3_600_000
            let now = clock.now
            // Group 0 reads 3 hours from now (UTC hour), group 1 5 hours from now; group 2 has no
            // history, and the app no statistics: it goes out at once.
            let hours = HourStatistics(client: stack.redis)
            for (group, ahead) in [(0, Int64(3)), (1, 5)] {
                for token in groups[group] {
                    for _ in 0..<3 {
                        try await hours.addReceipt(
                            .delivered, app: Stack.app, at: Date(timeIntervalSince1970: Double(now + ahead * hour) / 1000),
                            in: TimeZone(identifier: "UTC")!, device: token)
                    }
                }
            }
            try await stack.withWorker(clock: clock.function) { _ in
                var job = Stack.job(id: "best-hour", audience: .broadcast)
                job.sendAtDevice = .bestHour(withinHours: 24)
                try await stack.publish(job)
                _ = try await eventually("the devices without a history, at once") {
                    try await Self.accepted(stack, groups[2])
                } until: {
                    $0.allSatisfy { $0 == 1 }
                }
                let report = try await stack.report("best-hour")
                let starts = [3, 5].map { (now / hour + Int64($0)) * hour }
                #expect(report.sendTimes.map(\.at) == starts)
                #expect(try await Self.accepted(stack, groups[0] + groups[1]).allSatisfy { $0 == 0 })
                for (start, group) in zip(starts, groups) {
                    clock.move(to: start)
                    _ = try await eventually("the devices of the hour at \(start)") {
                        try await Self.accepted(stack, group)
                    } until: {
                        $0.allSatisfy { $0 == 1 }
                    }
                }
                let final = try await eventually("the job complete") {
                    try await stack.report("best-hour")
                } until: {
                    $0.isComplete
                }
                #expect(final.accepted == 60)
                #expect(try await Self.accepted(stack, groups.flatMap { $0 }).allSatisfy { $0 == 1 }, "once each")
            }
        }
    }

    /// Runs `body` with a worker on a moved clock, once a broadcast `jobID` to 20 devices in
    /// Tokyo at the hour two hours ahead of Tokyo's present one (one to two hours away) waits,
    /// parked for its one slot; `body` gets the report of then.
    func withParkedTokyoJob(
        _ jobID: String, _ body: (Stack, MovedClock, WorkerCounters, [DeviceToken], JobReport) async throws -> Void
    ) async throws {
        let tokens = (0..<20).map { Stack.token($0) }
        try await Stack.with { stack in
            try await stack.registry.bind(
                tokens.map { DeviceRegistration(token: $0, environment: .sandbox, registeredAt: 1_000, timeZone: "Asia/Tokyo") }, app: Stack.app)
            let clock = MovedClock()
            try await stack.withWorker(clock: clock.function) { counters in
                var job = Stack.job(id: jobID, audience: .broadcast)
                var tokyo = Calendar(identifier: .gregorian)
                tokyo.timeZone = TimeZone(identifier: "Asia/Tokyo")!
                let hour = tokyo.component(.hour, from: Date(timeIntervalSince1970: Double(clock.now) / 1000 + 7_200))
                job.sendAtDevice = .localTime(hour: hour, minute: 0)
                try await stack.publish(job)
                let parked = try await eventually("the job parked") {
                    try await stack.report(jobID)
                } until: {
                    $0.expansionComplete && $0.sendTimes.map(\.scheduled) == [20]
                }
                try await body(stack, clock, counters, tokens, parked)
            }
        }
    }

    @Test("a cancelled job sends none of what waits: its parked notifications are counted cancelled at their slot")
    func cancelledWhileParked() async throws {
        try await withParkedTokyoJob("cancelled-local") { stack, clock, _, tokens, parked in
            #expect(try await stack.jobs.cancel(jobID: "cancelled-local", at: clock.now))
            clock.move(to: parked.sendTimes[0].at)
            let final = try await eventually("the cancelled job complete") {
                try await stack.report("cancelled-local")
            } until: {
                $0.isComplete
            }
            #expect(final.cancelled == 20 && final.accepted == 0 && final.state == .cancelled)
            #expect(try await Self.accepted(stack, tokens).allSatisfy { $0 == 0 }, "none sent")
        }
    }

    @Test("paused while it waits and resumed: expanded again, each notification waits once and goes once")
    func pausedAndResumedWhileParked() async throws {
        try await withParkedTokyoJob("resumed-local") { stack, clock, counters, tokens, parked in
            let tasks = counters[.shardTasks]
            #expect(tasks > 0, "the broadcast was expanded in shard tasks")
            let operations = JobOperator(
                producer: stack.producer, jobs: stack.jobs,
                publisher: JobPublisher(producer: stack.producer, jobs: stack.jobs, idempotency: IdempotencyKeys(client: stack.redis)))
            _ = try await operations.pause(jobID: "resumed-local", reason: "checking the copy", at: clock.now)
            _ = try await operations.resume(jobID: "resumed-local", at: clock.now)
            // Resumed, it is published and expanded again: every shard task once more.
            _ = try await eventually("the job expanded again") {
                counters[.shardTasks]
            } until: {
                $0 >= 2 * tasks
            }
            #expect(try await stack.report("resumed-local").sendTimes == parked.sendTimes, "nothing parked twice")
            clock.move(to: parked.sendTimes[0].at)
            let final = try await eventually("the job complete") {
                try await stack.report("resumed-local")
            } until: {
                $0.isComplete
            }
            #expect(final.accepted == 20 && final.sendTimes.map(\.released) == [20])
            #expect(try await Self.accepted(stack, tokens).allSatisfy { $0 == 1 }, "once each")
        }
    }
}
