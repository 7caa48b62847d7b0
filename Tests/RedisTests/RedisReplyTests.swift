import Testing

@testable import Redis

@Suite("RedisReply and RedisArgument (no server)")
struct RedisReplyTests {
    @Test func accessorsReadTheMatchingCases() {
        #expect(RedisReply.integer(42).int == 42)
        #expect(RedisReply.bulk(Array("17".utf8)).int == 17)
        #expect(RedisReply.bulk(Array("x".utf8)).int == nil)
        #expect(RedisReply.status("OK").string == "OK")
        #expect(RedisReply.bulk([0x68, 0x69]).string == "hi")
        #expect(RedisReply.bulk([0, 13, 10]).bytes == [0, 13, 10])
        #expect(RedisReply.array([.integer(1), .null]).array == [.integer(1), .null])
        #expect(RedisReply.null.isNull)
        #expect(RedisReply.null.array == nil)
        #expect(RedisReply.error("ERR no").errorMessage == "ERR no")
        #expect(RedisReply.error("ERR no").string == nil)
    }

    @Test func argumentsAreWrittenAsLiterals() {
        let arguments: [RedisArgument] = ["SET", "key:\(7)", 42, .bytes([0, 1])]
        #expect(arguments == [.string("SET"), .string("key:7"), .integer(42), .bytes([0, 1])])
    }

    @Test func retryabilityFollowsTheCode() {
        #expect(RedisClientError(.connectionClosed, message: "lost").isRetryable)
        #expect(RedisClientError(.timeout, message: "slow").isRetryable)
        #expect(!RedisClientError(.serverError, message: "WRONGTYPE Operation").isRetryable)
        #expect(RedisClientError(.serverError, message: "LOADING Redis is loading").isRetryable)
        #expect(!RedisClientError(.authenticationFailed, message: "WRONGPASS").isRetryable)
    }

    @Test func reconnectBackoffDoublesUpToTheCap() {
        let policy = RedisConfiguration.Reconnect(maxAttempts: 6, initialDelay: .milliseconds(50), maxDelay: .milliseconds(300))
        let delays = (1...6).map { policy.delay(beforeAttempt: $0) }
        #expect(delays == [.zero, .milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(300), .milliseconds(300)])
    }
}
