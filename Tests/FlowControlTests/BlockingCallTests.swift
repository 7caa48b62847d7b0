import Dispatch
import FlowControl
import Synchronization
import Testing

@Suite("Blocking calls awaited by a task that may stop waiting")
struct BlockingCallTests {
    @Test("the result reaches the caller; nothing is abandoned")
    func result() async throws {
        let queue = DispatchQueue(label: "test")
        let abandoned = Atomic<Int>(0)
        let value = try await BlockingCall<Int>.run(on: queue, onAbandoned: { abandoned.add(1, ordering: .relaxed) }) { _ in 42 }
        #expect(value == 42)
        queue.sync {}
        #expect(abandoned.load(ordering: .relaxed) == 0)
    }

    @Test("a caller cancelled while the call blocks resumes at once; the call finishes on its queue and is marked abandoned")
    func cancelledWhileRunning() async throws {
        let queue = DispatchQueue(label: "test")
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let abandoned = Atomic<Int>(0)
        let caller = Task {
            try await BlockingCall<Int>.run(on: queue, onAbandoned: { abandoned.add(1, ordering: .relaxed) }) { call in
                started.signal()
                release.wait()  // the blocking C call, which no cancellation interrupts
                #expect(call.isCancelled)
                return 1
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                started.wait()
                continuation.resume()
            }
        }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        // The caller is gone while the call still blocks its queue.
        release.signal()
        queue.sync {}
        #expect(abandoned.load(ordering: .relaxed) == 1)
    }

    @Test("a caller cancelled before the call starts is resumed with CancellationError; the call learns it, and its result is dropped")
    func cancelledBeforeStart() async throws {
        let call = BlockingCall<Int>()
        call.cancel()
        #expect(call.isCancelled)
        await #expect(throws: CancellationError.self) {
            try await withCheckedThrowingContinuation { continuation in
                #expect(!call.start(continuation))
            }
        }
        #expect(call.finish(.success(1)) == .abandoned)
    }

    @Test("a result that arrived first is delivered once; a later cancellation changes nothing")
    func finishedBeforeCancel() async throws {
        let call = BlockingCall<Int>()
        let value = try await withCheckedThrowingContinuation { continuation in
            #expect(call.start(continuation))
            #expect(call.finish(.success(7)) == .delivered)
            call.cancel()
        }
        #expect(value == 7)
        #expect(!call.isCancelled)
    }
}
