import FlowControl
import Testing

@Suite("Async permits")
struct AsyncPermitsTests {
    /// Yields until `permits` has `count` callers waiting (each task below queues once).
    func untilWaiting(_ permits: AsyncPermits, _ count: Int) async {
        while permits.waiting < count { await Task.yield() }
    }

    @Test("free permits are taken at once; waiters are served in arrival order, a large one first even when a small one would fit")
    func arrivalOrder() async {
        let permits = AsyncPermits(3)
        await permits.acquire(3)
        #expect(permits.waiting == 0)

        let large = Task { await permits.acquire(2) }
        await untilWaiting(permits, 1)
        let small = Task { await permits.acquire(1) }
        await untilWaiting(permits, 2)

        // One permit back: the first waiter takes it and still misses one; the second, which
        // one permit would satisfy, keeps waiting behind it.
        permits.release(1)
        #expect(permits.waiting == 2)
        permits.release(1)
        await large.value
        #expect(permits.waiting == 1)
        permits.release(1)
        await small.value
        #expect(permits.waiting == 0)

        // Everything is taken again (2 + 1): one released is one free.
        permits.release(1)
        await permits.acquire(1)
        #expect(permits.capacity == 3)
    }
}
