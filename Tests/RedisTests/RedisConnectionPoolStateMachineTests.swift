import Testing

@testable import Redis

@Suite("Pool state machine (no server)")
struct RedisConnectionPoolStateMachineTests {
    typealias Machine = RedisConnectionPoolStateMachine<String, String>

    @Test func opensUpToCapacityThenQueuesInOrder() {
        var machine = Machine(capacity: 2)
        #expect(isOpen(machine.acquire(waiterID: 0, waiter: "a", isCancelled: false)))
        #expect(isOpen(machine.acquire(waiterID: 1, waiter: "b", isCancelled: false)))
        #expect(isWait(machine.acquire(waiterID: 2, waiter: "c", isCancelled: false)))
        #expect(isWait(machine.acquire(waiterID: 3, waiter: "d", isCancelled: false)))
        #expect(machine.connectionCount == 2)
        #expect(machine.waiterCount == 2)

        guard case .resume(let first, "conn1") = machine.release("conn1") else {
            Issue.record("release should hand the connection to the first waiter")
            return
        }
        #expect(first == "c")
        guard case .resume(let second, "conn2") = machine.release("conn2") else {
            Issue.record("release should hand the connection to the second waiter")
            return
        }
        #expect(second == "d")
        #expect(isKeep(machine.release("conn1")))
        guard case .use("conn1") = machine.acquire(waiterID: 4, waiter: "e", isCancelled: false) else {
            Issue.record("an idle connection should be reused")
            return
        }
        #expect(machine.connectionCount == 2)
    }

    @Test func acquiringWithoutWaitingNeverQueues() {
        var machine = Machine(capacity: 1)
        #expect(machine.acquireWithoutWaiting().map(isOpen) == true)
        #expect(machine.acquireWithoutWaiting() == nil, "all leased: the caller has to queue")
        #expect(machine.waiterCount == 0 && machine.connectionCount == 1)
        #expect(isKeep(machine.release("conn1")))
        guard case .use("conn1") = machine.acquireWithoutWaiting() else {
            Issue.record("an idle connection should be taken without waiting")
            return
        }
        #expect(isWait(machine.acquire(waiterID: 0, waiter: "a", isCancelled: false)))
        guard case .resume("a", "conn1") = machine.release("conn1") else {
            Issue.record("a queued waiter comes before an idle list")
            return
        }
        _ = machine.shutDown()
        guard case .shutDown = machine.acquireWithoutWaiting() else {
            Issue.record("a shut-down pool refuses at once")
            return
        }
    }

    @Test func aFailedOpenPassesItsSlotToTheNextWaiter() {
        var machine = Machine(capacity: 1)
        #expect(isOpen(machine.acquire(waiterID: 0, waiter: "a", isCancelled: false)))
        #expect(isWait(machine.acquire(waiterID: 1, waiter: "b", isCancelled: false)))
        #expect(machine.openFailed() == "b")
        #expect(machine.connectionCount == 1)
        #expect(machine.openFailed() == nil)
        #expect(machine.connectionCount == 0)
        #expect(isOpen(machine.acquire(waiterID: 2, waiter: "c", isCancelled: false)))
    }

    @Test func cancelledWaitersLeaveTheQueue() {
        var machine = Machine(capacity: 1)
        #expect(isOpen(machine.acquire(waiterID: 0, waiter: "a", isCancelled: false)))
        #expect(isWait(machine.acquire(waiterID: 1, waiter: "b", isCancelled: false)))
        #expect(isCancelled(machine.acquire(waiterID: 2, waiter: "c", isCancelled: true)))
        #expect(machine.cancel(waiterID: 1) == "b")
        #expect(machine.cancel(waiterID: 1) == nil)
        #expect(machine.waiterCount == 0)
        #expect(isKeep(machine.release("conn")))
    }

    @Test func shutdownFailsWaitersAndClosesLeasedConnectionsOnRelease() {
        var machine = Machine(capacity: 1)
        #expect(isOpen(machine.acquire(waiterID: 0, waiter: "a", isCancelled: false)))
        #expect(isWait(machine.acquire(waiterID: 1, waiter: "b", isCancelled: false)))
        let (idle, waiters) = machine.shutDown()
        #expect(idle.isEmpty)
        #expect(waiters == ["b"])
        guard case .close("leased") = machine.release("leased") else {
            Issue.record("a connection released after shutdown should be closed")
            return
        }
        guard case .shutDown = machine.acquire(waiterID: 2, waiter: "c", isCancelled: false) else {
            Issue.record("acquire after shutdown should fail")
            return
        }
        #expect(machine.connectionCount == 0)
    }

    @Test func shutdownClosesIdleConnections() {
        var machine = Machine(capacity: 2)
        #expect(isOpen(machine.acquire(waiterID: 0, waiter: "a", isCancelled: false)))
        #expect(isOpen(machine.acquire(waiterID: 1, waiter: "b", isCancelled: false)))
        #expect(isKeep(machine.release("idle")))
        let (idle, waiters) = machine.shutDown()
        #expect(idle == ["idle"])
        #expect(waiters.isEmpty)
        #expect(machine.connectionCount == 1)
    }

    private func isOpen(_ action: Machine.AcquireAction) -> Bool {
        if case .open = action { true } else { false }
    }

    private func isWait(_ action: Machine.AcquireAction) -> Bool {
        if case .wait = action { true } else { false }
    }

    private func isCancelled(_ action: Machine.AcquireAction) -> Bool {
        if case .cancelled = action { true } else { false }
    }

    private func isKeep(_ action: Machine.ReleaseAction) -> Bool {
        if case .keep = action { true } else { false }
    }
}
