import Testing

@testable import PushStore

@Suite("Job counters")
struct JobCounterTests {
    @Test("every counter's name reads back as the counter")
    func roundTrip() {
        let counters: [JobCounter] = [
            .targeted, .expanded, .chunks, .shards, .shardTargeted(3), .shardDone(15), .shardCancelled(7), .expansionComplete,
            .cancelledBeforeExpansion, .unknownOpenIDs,
            .otherEnvironment, .suspectDevices, .scheduledAt, .duplicateJob, .sent, .accepted, .failed(reason: "BadDeviceToken"),
            .retried, .deadLettered, .cancelled, .removed, .suspect, .movedEnvironment, .effectsDiscarded, .duplicates,
            .cancelRequested, .receipt(.delivered), .receipt(.opened),
        ]
        #expect(Set(counters.map(\.name)).count == counters.count, "names are distinct")
        for counter in counters {
            #expect(JobCounter(name: counter.name) == counter)
        }
        #expect(JobCounter(name: "failed:") == nil)
        #expect(JobCounter(name: "shard-done:x") == nil)
        #expect(JobCounter(name: "something-else") == nil)
    }
}
