import APNs
import Synchronization
import Testing

@testable import PushPipeline

/// The hand-over of outcomes from the APNs client's callbacks to the settling task.
@Suite("Send result queue")
struct SendResultQueueTests {
    static func notSent(_ n: Int) -> SendResult { .notSent(reason: "r\(n)") }

    /// What a taker task saw, read by the test afterwards.
    final class Seen<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
        func update(_ change: (inout Value) -> Void) { value.withLock { change(&$0) } }
        var current: Value { value.withLock { $0 } }
    }

    /// What a taker asking `queue` for `wanted` outcomes is served, where `release` runs only
    /// after the taker had its chance to be served with what is in now, which must be nothing.
    static func served(
        by queue: SendResultQueue, upTo wanted: Int, onlyAfter release: @escaping @Sendable () -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> [Int]? {
        let served = Seen<[Int]?>(nil)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                let batch = await queue.next(upTo: wanted)
                served.update { $0 = batch?.map(\.index) }
            }
            group.addTask {
                // Whenever this runs, the taker cannot have been served yet.
                await Task.yield()
                #expect(served.current == nil, "served before release", sourceLocation: sourceLocation)
                release()
            }
        }
        return served.current
    }

    @Test("outcomes come out in arrival order, a batch of the size asked for at a time")
    func batchesInOrder() async {
        let queue = SendResultQueue()
        queue.handOver(5)
        for index in [4, 1, 3, 0, 2] { queue.add(index, Self.notSent(index)) }
        let first = await queue.next(upTo: 2)
        #expect(first?.map(\.index) == [4, 1])
        queue.expect(5)
        #expect(await queue.next(upTo: 2)?.map(\.index) == [3, 0])
        #expect(await queue.next(upTo: 2)?.map(\.index) == [2])
        #expect(await queue.next(upTo: 2) == nil)
    }

    @Test("a waiting taker is served once its batch is full, or once the last expected outcome arrives")
    func waitsForAFullBatchOrTheEnd() async {
        let queue = SendResultQueue()
        queue.expect(3)
        let taken = Seen<[[Int]]>([])
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while let batch = await queue.next(upTo: 2) {
                    taken.update { $0.append(batch.map(\.index)) }
                }
            }
            group.addTask {
                for index in 0..<3 {
                    await Task.yield()
                    queue.add(index, Self.notSent(index))
                }
            }
        }
        #expect(taken.current == [[0, 1], [2]])
    }

    @Test("a partial batch waits for the answers still coming, and for nothing else")
    func waitsOnlyForAnswersComing() async {
        let queue = SendResultQueue()
        queue.handOver(2)
        queue.add(0, Self.notSent(0))
        // One of the two handed over is still at APNs: not served until it answers.
        #expect(await Self.served(by: queue, upTo: 5, onlyAfter: { queue.add(1, Self.notSent(1)) }) == [0, 1])
        // Every answer of what was handed over is in: served at once, although the batch is not
        // full and the total is unknown (the sender may be waiting for the throttle or for slots).
        queue.handOver(3)
        for index in 2..<5 { queue.add(index, Self.notSent(index)) }
        #expect(await queue.next(upTo: 250)?.map(\.index) == [2, 3, 4])
        queue.handOver(1)
        #expect(await Self.served(by: queue, upTo: 5, onlyAfter: { queue.add(5, Self.notSent(5)) }) == [5])
    }

    @Test("the end is known only once the total is")
    func endNeedsTheTotal() async {
        let queue = SendResultQueue()
        queue.handOver(1)
        queue.add(0, Self.notSent(0))
        #expect(await queue.next(upTo: 5)?.map(\.index) == [0])
        // Everything handed over was taken, and more may be handed over: the taker waits.
        #expect(await Self.served(by: queue, upTo: 5, onlyAfter: { queue.expect(1) }) == nil)
    }

    @Test("nothing expected: the end at once")
    func empty() async {
        let queue = SendResultQueue()
        queue.expect(0)
        #expect(await queue.next(upTo: 250) == nil)
    }

    @Test("after allowPartial a waiting taker gets what is in, without waiting for a full batch")
    func partialServesWhatIsIn() async {
        let queue = SendResultQueue()
        queue.handOver(250)
        queue.add(7, Self.notSent(7))
        queue.add(3, Self.notSent(3))
        // Two of 250 in, total unknown: not served until a partial batch is allowed.
        #expect(await Self.served(by: queue, upTo: 250, onlyAfter: { queue.allowPartial() }) == [7, 3])
    }

    @Test("a partial serving is one serving: the next batch is full again")
    func partialIsOneServing() async {
        let queue = SendResultQueue()
        queue.handOver(4)
        queue.allowPartial()
        queue.add(0, Self.notSent(0))
        #expect(await queue.next(upTo: 3)?.map(\.index) == [0])
        queue.add(1, Self.notSent(1))
        let rest = { @Sendable in
            queue.add(2, Self.notSent(2))
            queue.add(3, Self.notSent(3))
        }
        #expect(await Self.served(by: queue, upTo: 3, onlyAfter: rest) == [1, 2, 3])
    }

    @Test("next(upTo:orAfter:) serves a partial batch once its patience has passed")
    func patienceServesAPartialBatch() async {
        let queue = SendResultQueue()
        queue.handOver(2)
        queue.add(0, Self.notSent(0))
        let batch = await queue.next(upTo: 250, orAfter: .milliseconds(5))
        #expect(batch?.map(\.index) == [0])
        queue.expect(1)
        #expect(await queue.next(upTo: 250, orAfter: .seconds(60)) == nil)
    }
}
