import NIOCore
import PushCore
import Testing

@testable import PushFleetBenchmarks

/// The online benchmark's figures: percentiles by nearest rank, and the load's tally.
@Suite struct OnlineBenchmarkTests {
    @Test func percentilesAreTheNearestRank() {
        let values = (1...100).map(Double.init)
        #expect(OnlineBenchmark.percentile(values, 0.50) == 50)
        #expect(OnlineBenchmark.percentile(values, 0.99) == 99)
        #expect(OnlineBenchmark.percentile(values, 1.0) == 100)
        #expect(OnlineBenchmark.percentile([7], 0.99) == 7)
        #expect(OnlineBenchmark.percentile([], 0.99) == 0)
    }

    @Test func theTallyTimesAcksFromTheirJobsPublication() {
        let tally = WebSocketLoad.Tally()
        let published = ContinuousClock.now - .milliseconds(200)
        tally.published("job-1", at: published)
        tally.pushed(jobID: "job-1")
        tally.pushed(jobID: "unknown")
        #expect(tally.pushes == 2)
        let latencies = tally.takeLatencies()
        #expect(latencies.count == 1)
        #expect(latencies.allSatisfy { $0 >= 200 })
        #expect(tally.takeLatencies().isEmpty)
    }

    @Test func theEchoMessageIsAsLargeAsABroadcastsPush() {
        // The push frame of a broadcast job of the benchmark, as the gateway writes it, is within
        // a few bytes of the echo's message: both ways carry the same bytes per message.
        let push =
            #"{"type":"push","id":"online-broadcast-0:12345","job":"online-broadcast-0","push-type":"alert","notification":{"aps":{"alert":{"title":"Online","body":"PushFleet"}},"pushfleet":{"job":"online-broadcast-0"}}}"#
        #expect(abs(OnlineBenchmark.echoMessage.utf8.count - push.utf8.count) <= 2)
    }

    static func outcome(
        _ scenario: OnlineFaultScenario, received: Int, apns: Int, missed: Int = 0, twice: Int = 0, inFlight: Int = 0, online: Int,
        accepted: Int = 0, inboxed: Int = 0, inboxRead: Int = 0
    ) -> OnlineFaultOutcome {
        var outcome = OnlineFaultOutcome(
            scenario: scenario.rawValue, delivery: scenario.delivery.rawValue, fault: scenario.fault, devices: 100, receivedOnline: received,
            throughAPNs: apns, missed: missed, twice: twice, inFlightAtFault: inFlight, handedBackAfterWriting: 0, lateAcks: 0, online: online,
            accepted: accepted, inboxed: inboxed,
            inboxRead: inboxRead, reconnected: 0, seconds: 1, violations: [])
        outcome.judge(scenario)
        return outcome
    }

    @Test func aFaultScenarioMeetsItsExpectationsOnlyWhenNothingIsMissedAndEachNotificationEndsOnce() {
        // A gateway killed: 60 online, 40 through APNs, 10 of them received online first (in flight 15).
        #expect(Self.outcome(.gatewayKill, received: 70, apns: 40, twice: 10, inFlight: 15, online: 60, accepted: 40).violations.isEmpty)
        #expect(Self.outcome(.gatewayKill, received: 60, apns: 39, missed: 1, online: 60, accepted: 39).violations.contains("1 missed"))
        #expect(
            Self.outcome(.gatewayKill, received: 70, apns: 40, twice: 16, inFlight: 15, online: 60, accepted: 40).violations
                == ["16 got it twice, more than the 15 in flight"])
        // The report must give every notification one outcome.
        #expect(
            Self.outcome(.gatewayKill, received: 60, apns: 40, online: 61, accepted: 40).violations == ["online 61 + accepted 40 ≠ 100"])
        // Online-only: never APNs, online + inboxed is the audience.
        #expect(Self.outcome(.gatewayKillOnlineOnly, received: 100, apns: 0, online: 55, inboxed: 45).violations.isEmpty)
        #expect(
            Self.outcome(.gatewayKillOnlineOnly, received: 100, apns: 1, twice: 1, inFlight: 5, online: 55, inboxed: 45).violations
                == ["1 went through APNs"])
        #expect(
            Self.outcome(.gatewayKillOnlineOnly, received: 100, apns: 0, online: 55, inboxed: 44).violations == ["online 55 + inboxed 44 ≠ 100"])
        #expect(
            Self.outcome(.gatewayKillOnlineOnly, received: 100, apns: 0, online: 55, inboxed: 45, inboxRead: 46).violations
                == ["inbox-read 46 > inboxed 45"])
        // Presence lost: nothing may go online.
        #expect(Self.outcome(.presenceLost, received: 0, apns: 100, online: 0, accepted: 100).violations.isEmpty)
        #expect(Self.outcome(.presenceLost, received: 3, apns: 100, twice: 3, online: 0, accepted: 100).violations.count == 2)
    }

    @Test func theScenariosAckAsTheirAppsWould() throws {
        #expect(OnlineFaultScenario.neverAck.ackPolicy(device: 2) == .immediately)
        #expect(OnlineFaultScenario.neverAck.ackPolicy(device: 3) == .never)
        #expect(OnlineFaultScenario.gatewayKill.ackPolicy(device: 3) == .after(.milliseconds(20)))
        #expect(OnlineFaultScenario.gatewayKillOnlineOnly.delivery == .onlineOnly)
        #expect(try OnlineFaultScenario.parse("never-ack,presence-lost") == [.neverAck, .presenceLost])
        #expect(throws: BenchmarkError.self) { try OnlineFaultScenario.parse("gateway-kill,nope") }
    }
}
