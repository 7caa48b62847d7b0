import Testing

@testable import Kafka

/// The consumer's decisions, without librdkafka: waiters are strings.
@Suite("Kafka consumer state machine")
struct KafkaConsumerStateMachineTests {
    typealias Machine = KafkaConsumerStateMachine<String, String>
    let p0 = KafkaTopicPartition(topic: "push.jobs", partition: 0)
    let p1 = KafkaTopicPartition(topic: "push.jobs", partition: 1)

    func message(_ partition: KafkaTopicPartition, _ offset: Int64) -> KafkaConsumerMessage {
        KafkaConsumerMessage(
            topic: partition.topic, partition: partition.partition, offset: offset, key: nil, value: [],
            headers: [], timestampMilliseconds: nil, epoch: 0)
    }

    /// Takes the next message, or records an issue.
    func take(_ machine: inout Machine, _ location: SourceLocation = #_sourceLocation) -> KafkaConsumerMessage? {
        guard case .message(let message, _) = machine.take(parking: nil) else {
            Issue.record("expected a message", sourceLocation: location)
            return nil
        }
        return message
    }

    @Test("a parked iterator gets the first fetched message; the rest wait in the buffer in order")
    func parkedIteratorGetsTheFirstFetch() {
        var machine = Machine(bufferCapacity: 10)
        machine.assigned([p0])
        guard case .parked = machine.take(parking: "iterator") else {
            Issue.record("an empty buffer parks the iterator")
            return
        }
        let resumed = machine.fetched([message(p0, 0), message(p0, 1), message(p0, 2)])
        #expect(resumed?.waiter == "iterator")
        #expect(resumed?.message.offset == 0)
        #expect(machine.bufferedCount == 2)
        #expect(take(&machine)?.offset == 1)
        #expect(machine.withApplication == 2)
    }

    @Test("messages of a partition not assigned never reach the application")
    func staleFetchesAreDropped() {
        var machine = Machine(bufferCapacity: 10)
        machine.assigned([p0])
        let fetched1 = machine.fetched([message(p1, 0), message(p0, 5)])
        #expect(fetched1 == nil)
        #expect(machine.bufferedCount == 1)
        #expect(take(&machine)?.topicPartition == p0)
    }

    @Test("a full buffer stops the poll thread until the application takes a message, which wakes it")
    func backPressure() {
        var machine = Machine(bufferCapacity: 2)
        machine.assigned([p0])
        let poll1 = machine.poll(batchLimit: 500)
        #expect(poll1 == .fetch(upTo: 2))
        _ = machine.fetched([message(p0, 0), message(p0, 1)])
        let poll2 = machine.poll(batchLimit: 500)
        #expect(poll2 == .waitForRoom)
        guard case .message(_, let wakePoller) = machine.take(parking: nil) else {
            Issue.record("expected a message")
            return
        }
        #expect(wakePoller, "the poll thread waits for room")
        let poll3 = machine.poll(batchLimit: 500)
        #expect(poll3 == .fetch(upTo: 1))
        guard case .message(_, let wakesAgain) = machine.take(parking: nil) else {
            Issue.record("expected a message")
            return
        }
        #expect(!wakesAgain, "the poll thread was already woken")
    }

    @Test("commits advance over the processed prefix only, and a failed commit is offered again")
    func commitsFollowTheProcessedPrefix() {
        var machine = Machine(bufferCapacity: 10)
        machine.assigned([p0])
        _ = machine.fetched([message(p0, 0), message(p0, 1)])
        let first = take(&machine)!
        let second = take(&machine)!
        _ = machine.processed(second)
        let commit1 = machine.commit(of: nil)
        #expect(commit1.isEmpty, "offset 0 is still in progress")
        _ = machine.processed(first)
        let commit2 = machine.commit(of: nil)
        #expect(commit2 == [p0: 2])
        let commit3 = machine.commit(of: nil)
        #expect(commit3.isEmpty)
        machine.commitFailed([p0])
        let commit4 = machine.commit(of: nil)
        #expect(commit4 == [p0: 2])
    }

    @Test("a revoke waits for its partitions' messages in progress only, and each one coming back wakes it")
    func revokeWaitsForItsPartitions() {
        var machine = Machine(bufferCapacity: 10)
        machine.assigned([p0, p1])
        _ = machine.fetched([message(p0, 0), message(p1, 0), message(p0, 1), message(p0, 2)])
        let a = take(&machine)!
        let b = take(&machine)!
        let c = take(&machine)!
        let revokeStarted1 = machine.revokeStarted([p0])
        #expect(revokeStarted1)
        #expect(machine.bufferedCount == 0, "p0's buffered message stays for the next owner")
        #expect(!machine.revokeMayProceed)
        let processed1 = machine.processed(b)
        #expect(!processed1.wakesRevoke, "p1 is not revoked")
        let processed2 = machine.processed(a)
        #expect(processed2.wakesRevoke)
        #expect(!machine.revokeMayProceed, "p0 offset 1 is still in progress")
        let unfinished1 = machine.unfinished(c)
        #expect(unfinished1.wakesRevoke)
        #expect(machine.revokeMayProceed)
        let commit1 = machine.commit(of: [p0])
        #expect(commit1 == [p0: 1], "only what was processed; the unfinished message is read again")
        machine.revokeFinished([p0])
        #expect(machine.phase == .running)
        #expect(machine.assignment == [p1])
    }

    @Test("a message returned after its partition was revoked moves nothing, and counts for a close")
    func lateReturnsAfterARevoke() {
        var machine = Machine(bufferCapacity: 10)
        machine.assigned([p0])
        _ = machine.fetched([message(p0, 0)])
        let late = take(&machine)!
        let revokeStarted1 = machine.revokeStarted([p0])
        #expect(revokeStarted1)
        // The grace period ended with the message still in progress.
        _ = machine.commit(of: [p0])
        machine.revokeFinished([p0])
        machine.assigned([p0])
        _ = machine.fetched([message(p0, 0)])
        let again = take(&machine)!
        let processed1 = machine.processed(late)
        #expect(!processed1.wakesRevoke)
        let commit1 = machine.commit(of: nil)
        #expect(commit1.isEmpty, "the stale acknowledgement commits nothing")
        #expect(machine.withApplication == 1)
        _ = machine.processed(again)
        let commit2 = machine.commit(of: nil)
        #expect(commit2 == [p0: 1])
    }

    @Test("a close ends the sequence, empties the buffer, releases a revoke and refuses periodic commits")
    func close() {
        var machine = Machine(bufferCapacity: 10)
        machine.assigned([p0])
        _ = machine.fetched([message(p0, 0), message(p0, 1)])
        let inProgress = take(&machine)!
        let revokeStarted1 = machine.revokeStarted([p0])
        #expect(revokeStarted1)
        #expect(!machine.revokeMayProceed)
        guard case .close(let iterator) = machine.close() else {
            Issue.record("the first close closes")
            return
        }
        #expect(iterator == nil, "nobody was parked")
        guard case .alreadyClosing = machine.close() else {
            Issue.record("a second close waits for the first")
            return
        }
        #expect(machine.revokeMayProceed, "a closing consumer's revoke does not wait")
        guard case .finished = machine.take(parking: "iterator") else {
            Issue.record("a closed consumer hands out nothing")
            return
        }
        let fetched1 = machine.fetched([message(p0, 2)])
        #expect(fetched1 == nil)
        _ = machine.processed(inProgress)
        let commit1 = machine.commit(of: nil)
        #expect(commit1.isEmpty, "the close's revoke commits, nothing else")
        let commit2 = machine.commit(of: [p0])
        #expect(commit2 == [p0: 1])
        machine.revokeFinished([p0])
        #expect(machine.phase == .closing)
        let revokeStarted2 = machine.revokeStarted([p0])
        #expect(!revokeStarted2, "a revoke while closing does not wait")
    }

    @Test("a close resumes a parked iterator with the end of the sequence")
    func closeResumesTheIterator() {
        var machine = Machine(bufferCapacity: 10)
        _ = machine.take(parking: "iterator")
        guard case .close(let iterator) = machine.close() else {
            Issue.record("the first close closes")
            return
        }
        #expect(iterator == "iterator")
    }

    @Test("a close waiting for the application is resumed by the last message back, not before")
    func closeWaitsForTheApplication() {
        var machine = Machine(bufferCapacity: 10)
        machine.assigned([p0])
        _ = machine.fetched([message(p0, 0), message(p0, 1)])
        let a = take(&machine)!
        let b = take(&machine)!
        _ = machine.close()
        let waitForApplication1 = machine.waitForApplication("close")
        #expect(!waitForApplication1)
        let processed1 = machine.processed(a)
        #expect(processed1.drained == nil)
        let unfinished1 = machine.unfinished(b)
        #expect(unfinished1.drained == "close")
        let waitForApplication2 = machine.waitForApplication("again")
        #expect(waitForApplication2, "nothing is with the application")
        let stopWaitingForApplication1 = machine.stopWaitingForApplication()
        #expect(stopWaitingForApplication1 == nil)
    }

    @Test("a close that stops waiting takes its waiter back")
    func closeStopsWaiting() {
        var machine = Machine(bufferCapacity: 10)
        machine.assigned([p0])
        _ = machine.fetched([message(p0, 0)])
        let a = take(&machine)!
        _ = machine.close()
        let waitForApplication1 = machine.waitForApplication("close")
        #expect(!waitForApplication1)
        let stopWaitingForApplication1 = machine.stopWaitingForApplication()
        #expect(stopWaitingForApplication1 == "close")
        let processed1 = machine.processed(a)
        #expect(processed1.drained == nil)
    }

    @Test("one periodic commit at a time, at most once per interval")
    func periodicCommits() {
        let start = ContinuousClock.now
        var machine = Machine(bufferCapacity: 10, now: start)
        let periodicCommitDue1 = machine.periodicCommitDue(now: start + .milliseconds(500), interval: .seconds(1))
        #expect(!periodicCommitDue1)
        let periodicCommitDue2 = machine.periodicCommitDue(now: start + .seconds(1), interval: .seconds(1))
        #expect(periodicCommitDue2)
        let periodicCommitDue3 = machine.periodicCommitDue(now: start + .seconds(5), interval: .seconds(1))
        #expect(!periodicCommitDue3, "one is still scheduled")
        machine.periodicCommitRan()
        let periodicCommitDue4 = machine.periodicCommitDue(now: start + .seconds(5), interval: .seconds(1))
        #expect(periodicCommitDue4)
    }
}
