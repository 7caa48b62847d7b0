import Testing

@testable import Kafka

@Suite struct PartitionOffsetTrackerTests {
    let partition = KafkaTopicPartition(topic: "push.jobs", partition: 0)

    @Test func inOrderProcessingCommitsPastTheLastMessage() throws {
        let tracker = TrackerHarness()
        let epoch = tracker.assign(partition)
        for offset in Int64(0)..<5 {
            #expect(tracker.fetched(partition, offset: offset) == epoch)
        }
        for offset in Int64(0)..<5 {
            #expect(tracker.processed(partition, offset: offset, epoch: epoch))
        }
        #expect(tracker.takeCommittable() == [partition: 5])
        #expect(tracker.takeCommittable().isEmpty, "nothing new to commit")
    }

    @Test func outOfOrderProcessingNeverCommitsPastAnUnprocessedOffset() {
        let tracker = TrackerHarness()
        let epoch = tracker.assign(partition)
        for offset in Int64(0)..<10 { _ = tracker.fetched(partition, offset: offset) }
        for offset in [9, 8, 7, 1, 0, 4, 5, 6] as [Int64] {
            tracker.processed(partition, offset: offset, epoch: epoch)
        }
        // 2 and 3 are outstanding: only 0 and 1 are a processed prefix.
        #expect(tracker.takeCommittable() == [partition: 2])
        tracker.processed(partition, offset: 3, epoch: epoch)
        #expect(tracker.takeCommittable().isEmpty)
        tracker.processed(partition, offset: 2, epoch: epoch)
        #expect(tracker.takeCommittable() == [partition: 10])
    }

    @Test func offsetGapsFromCompactionDoNotBlockTheCommit() {
        let tracker = TrackerHarness()
        let epoch = tracker.assign(partition)
        for offset in [3, 7, 20] as [Int64] { _ = tracker.fetched(partition, offset: offset) }
        tracker.processed(partition, offset: 20, epoch: epoch)
        tracker.processed(partition, offset: 3, epoch: epoch)
        #expect(tracker.takeCommittable() == [partition: 4])
        tracker.processed(partition, offset: 7, epoch: epoch)
        #expect(tracker.takeCommittable() == [partition: 21])
    }

    @Test func acknowledgementFromBeforeARevokeIsIgnored() {
        let tracker = TrackerHarness()
        let oldEpoch = tracker.assign(partition)
        _ = tracker.fetched(partition, offset: 0)
        tracker.revoke(partition)
        #expect(!tracker.processed(partition, offset: 0, epoch: oldEpoch))
        let newEpoch = tracker.assign(partition)
        #expect(newEpoch != oldEpoch)
        _ = tracker.fetched(partition, offset: 0)
        #expect(!tracker.processed(partition, offset: 0, epoch: oldEpoch), "stale epoch after reassignment")
        #expect(tracker.takeCommittable().isEmpty)
        #expect(tracker.processed(partition, offset: 0, epoch: newEpoch))
        #expect(tracker.takeCommittable() == [partition: 1])
    }

    @Test func unassignedPartitionsAndRefetchesAreRejected() {
        let tracker = TrackerHarness()
        #expect(tracker.fetched(partition, offset: 0) == nil)
        let epoch = tracker.assign(partition)
        _ = tracker.fetched(partition, offset: 5)
        #expect(tracker.fetched(partition, offset: 5) == nil, "a duplicate fetch is not tracked twice")
        #expect(tracker.processed(partition, offset: 5, epoch: epoch))
        #expect(!tracker.processed(partition, offset: 5, epoch: epoch), "a duplicate acknowledgement")
        #expect(tracker.unprocessedCount(of: partition) == 0)
    }

    @Test func failedCommitIsOfferedAgain() {
        let tracker = TrackerHarness()
        let epoch = tracker.assign(partition)
        _ = tracker.fetched(partition, offset: 0)
        tracker.processed(partition, offset: 0, epoch: epoch)
        #expect(tracker.takeCommittable() == [partition: 1])
        tracker.forgetCommitted(partition)
        #expect(tracker.takeCommittable() == [partition: 1])
    }

    @Test func selectionLimitsWhatIsCommitted() {
        let tracker = TrackerHarness()
        let other = KafkaTopicPartition(topic: "push.jobs", partition: 1)
        let first = tracker.assign(partition)
        let second = tracker.assign(other)
        _ = tracker.fetched(partition, offset: 0)
        _ = tracker.fetched(other, offset: 0)
        tracker.processed(partition, offset: 0, epoch: first)
        tracker.processed(other, offset: 0, epoch: second)
        #expect(tracker.takeCommittable(of: [other]) == [other: 1])
        #expect(tracker.takeCommittable() == [partition: 1])
    }

    @Test func onlyTheCurrentAssignmentsEpochIsCurrent() {
        let tracker = TrackerHarness()
        #expect(!tracker.isCurrent(partition, epoch: 1), "an unassigned partition has no current epoch")
        let first = tracker.assign(partition)
        #expect(tracker.isCurrent(partition, epoch: first))
        tracker.revoke(partition)
        #expect(!tracker.isCurrent(partition, epoch: first))
        let second = tracker.assign(partition)
        #expect(tracker.isCurrent(partition, epoch: second))
        #expect(!tracker.isCurrent(partition, epoch: first), "an earlier assignment's epoch stays stale")
    }
}

/// Wraps the tracker in a reference so `#expect` can evaluate its mutating calls.
private final class TrackerHarness {
    private var tracker = PartitionOffsetTracker()

    func assign(_ partition: KafkaTopicPartition) -> UInt64 { tracker.assign(partition) }
    func revoke(_ partition: KafkaTopicPartition) { tracker.revoke(partition) }
    func fetched(_ partition: KafkaTopicPartition, offset: Int64) -> UInt64? {
        tracker.fetched(partition, offset: offset)
    }
    @discardableResult
    func processed(_ partition: KafkaTopicPartition, offset: Int64, epoch: UInt64) -> Bool {
        tracker.processed(partition, offset: offset, epoch: epoch)
    }
    func takeCommittable(of selection: Set<KafkaTopicPartition>? = nil) -> [KafkaTopicPartition: Int64] {
        tracker.takeCommittable(of: selection)
    }
    func forgetCommitted(_ partition: KafkaTopicPartition) { tracker.forgetCommitted(partition) }
    func unprocessedCount(of partition: KafkaTopicPartition) -> Int { tracker.unprocessedCount(of: partition) }
    func isCurrent(_ partition: KafkaTopicPartition, epoch: UInt64) -> Bool { tracker.isCurrent(partition, epoch: epoch) }

}
