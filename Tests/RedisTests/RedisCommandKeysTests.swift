import Testing

@testable import Redis

/// Where a command's keys are and whether it only reads, without a server.
@Suite("Redis command keys")
struct RedisCommandKeysTests {
    private func slot(_ command: [RedisArgument]) throws(RedisClientError) -> RedisHashSlot? {
        try RedisCommandKeys(command: command).slot(of: command)
    }

    @Test("the key is the first argument, every argument, a script's keys, or after a subcommand")
    func positions() throws {
        let foo = RedisHashSlot(key: "foo")
        #expect(try slot(["SET", "foo", "1"]) == foo)
        #expect(try slot(["set", "foo", "1"]) == foo, "names in any case")
        #expect(try slot(["HINCRBY", "foo", "field", 1]) == foo, "an unknown name takes its first argument")
        #expect(try slot(["DEL", "{t}a", "{t}b"]) == RedisHashSlot(key: "t"))
        #expect(try slot(["EVALSHA", "0123abcd", 2, "{t}a", "{t}b", "notakey"]) == RedisHashSlot(key: "t"))
        #expect(try slot(["EVALSHA", "0123abcd", "1", "foo", "bar"]) == foo, "numkeys given as text")
        #expect(try slot(["EVALSHA", "0123abcd", 0, "foo"]) == nil, "a script without keys goes to any master")
        #expect(try slot(["EVALSHA", "0123abcd", 3, "foo"]) == nil, "fewer keys than numkeys: no key")
        #expect(try slot(["MEMORY", "USAGE", "foo"]) == foo)
        #expect(try slot(["OBJECT", "ENCODING", "foo"]) == foo)
        #expect(try slot(["PING"]) == nil)
        #expect(try slot(["CLUSTER", "SHARDS"]) == nil)
        #expect(try slot(["INFO", "memory"]) == nil, "keyless: the argument is not a key")
        #expect(try slot([]) == nil)
        #expect(try slot(["SET", .bytes(Array("foo".utf8)), "1"]) == foo)
        #expect(try slot(["GET", 42]) == RedisHashSlot(key: "42"))
    }

    @Test("keys in different slots are refused, naming two of them and asking for a hash tag")
    func crossSlot() {
        for command: [RedisArgument] in [["DEL", "foo", "bar"], ["eval", "return 1", 2, "foo", "bar"]] {
            do {
                _ = try slot(command)
                Issue.record("\(command) spans two slots")
            } catch {
                #expect(error.code == .crossSlot && !error.isRetryable)
                #expect(error.message.contains("foo") && error.message.contains("bar") && error.message.contains("hash tag"))
            }
        }
    }

    @Test("reads and writes")
    func reads() {
        for name in ["GET", "hgetall", "SMISMEMBER", "EXISTS", "MEMORY", "PING", "CLUSTER", "ASKING", "BITFIELD_RO"] {
            #expect(RedisCommandKeys(name: name).isRead, "\(name)")
        }
        for name in ["SET", "SADD", "DEL", "EVALSHA", "EVALSHA_RO", "BITFIELD", "HINCRBY", "FLUSHALL", "NEWCOMMAND"] {
            #expect(!RedisCommandKeys(name: name).isRead, "\(name)")
        }
        #expect(RedisCommandKeys(command: []).isRead, "nothing to confirm")
    }

    @Test("a batch's slots, in order, names looked up per run of equal names")
    func batch() throws {
        let commands: [[RedisArgument]] = [
            ["SET", "a", "1"], ["SET", "b", "1"], ["PING"], ["set", "c", "1"], ["DEL", "{x}1", "{x}2"], ["SET", "d", "1"],
        ]
        let slots = try RedisCommandKeys.slots(of: commands)
        #expect(slots == commands.map { try? slot($0) })
        #expect(
            slots == [
                RedisHashSlot(key: "a"), RedisHashSlot(key: "b"), nil, RedisHashSlot(key: "c"), RedisHashSlot(key: "x"), RedisHashSlot(key: "d"),
            ])
        #expect(throws: RedisClientError.self) { try RedisCommandKeys.slots(of: [["SET", "a", "1"], ["DEL", "foo", "bar"]]) }
    }
}
