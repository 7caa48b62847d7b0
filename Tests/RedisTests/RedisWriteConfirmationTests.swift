import Testing

@testable import Redis

/// When a batch of writes on a cluster master counts as done (``RedisWriteConfirmation``).
@Suite struct RedisWriteConfirmationTests {
    @Test func enoughReplicasConfirm() {
        #expect(RedisWriteConfirmation.judge(wait: .integer(1), writes: [.status("OK")], required: 1) == .confirmed)
        #expect(RedisWriteConfirmation.judge(wait: .integer(2), writes: [.integer(3)], required: 1) == .confirmed)
    }

    @Test func tooFewReplicasLeaveTheWritesUnconfirmed() {
        #expect(RedisWriteConfirmation.judge(wait: .integer(0), writes: [.status("OK")], required: 1) == .unconfirmed(replicas: 0))
        #expect(
            RedisWriteConfirmation.judge(wait: .integer(1), writes: [.error("MOVED 1 10.0.0.1:6379"), .integer(1)], required: 2)
                == .unconfirmed(replicas: 1))
    }

    @Test func aNodeThatWroteNothingNeedsNoConfirmation() {
        // A master demoted to a replica: every write redirected, WAIT refused.
        let moved = RedisReply.error("MOVED 3999 10.0.0.2:6379")
        #expect(
            RedisWriteConfirmation.judge(wait: .error("ERR WAIT cannot be used with replica instances."), writes: [moved, moved], required: 1)
                == .nothingWritten)
        #expect(RedisWriteConfirmation.judge(wait: .integer(0), writes: [moved], required: 1) == .nothingWritten)
    }

    @Test func aRefusedWaitAfterAWriteLeavesItUnconfirmed() {
        // A master demoted between the write and the WAIT: the write may be discarded.
        #expect(
            RedisWriteConfirmation.judge(wait: .error("ERR WAIT cannot be used with replica instances."), writes: [.status("OK")], required: 1)
                == .unconfirmed(replicas: 0))
    }
}
