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
}
