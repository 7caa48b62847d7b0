import FlowControl
import Testing

@Suite("Async permits")
struct AsyncPermitsTests {
    /// Yields until `permits` has `count` callers waiting (each task below queues once).
    func untilWaiting(_ permits: AsyncPermits, _ count: Int) async {
        while permits.waiting < count { await Task.yield() }
    }

    @Test("free permits are taken at once; waiters are served in arrival order, a large one first even when a small one would fit")
    func arrivalOrder() async throws {
        let permits = AsyncPermits(3)
        try await permits.acquire(3)
        #expect(permits.waiting == 0)

        let large = Task { try await permits.acquire(2) }
        await untilWaiting(permits, 1)
        let small = Task { try await permits.acquire(1) }
        await untilWaiting(permits, 2)

        // One permit back: the first waiter takes it and still misses one; the second, which
        // one permit would satisfy, keeps waiting behind it.
        permits.release(1)
        #expect(permits.waiting == 2)
        permits.release(1)
        try await large.value
        #expect(permits.waiting == 1)
        permits.release(1)
        try await small.value
        #expect(permits.waiting == 0)

        // Everything is taken again (2 + 1): one released is one free.
        permits.release(1)
        try await permits.acquire(1)
        #expect(permits.capacity == 3)
        #expect(permits.inUse == 3)
    }

    @Test("a cancelled waiter throws, holds nothing, and the permits it had been promised go to the next waiter")
    func cancelledWaiter() async throws {
        let permits = AsyncPermits(3)
        try await permits.acquire(2)
        // The first waiter takes the one free permit and waits for two more.
        let large = Task { try await permits.acquire(3) }
        await untilWaiting(permits, 1)
        let small = Task { try await permits.acquire(1) }
        await untilWaiting(permits, 2)
        #expect(permits.inUse == 3)

        large.cancel()
        await #expect(throws: CancellationError.self) { try await large.value }
        // Its promised permit went to the small waiter behind it.
        try await small.value
        #expect(permits.waiting == 0)
        #expect(permits.inUse == 3)
        permits.release(3)
        #expect(permits.inUse == 0)
    }

    @Test("a task cancelled before it asks gets CancellationError when it would wait, and its permits when they are free")
    func cancelledBeforeAsking() async throws {
        let permits = AsyncPermits(1)
        let free = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await permits.acquire(1)
        }
        try await free.value  // free permits are taken without waiting, cancelled or not
        let busy = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await permits.acquire(1)
        }
        await #expect(throws: CancellationError.self) { try await busy.value }
        #expect(permits.waiting == 0)
        #expect(permits.inUse == 1)
    }
}
