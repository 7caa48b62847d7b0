/// Where a command's keys are, and whether it only reads: what a cluster client needs to route a
/// command to its slot's master and to know whether a batch needs a replica's confirmation.
///
/// A rule without I/O. The command name is looked up once in one table, as given (callers write
/// names in upper case) and else upper-cased; a batch looks up each distinct name of a run of
/// equal names once (``slots(of:)``), because a pipeline is mostly one command repeated.
struct RedisCommandKeys: Sendable, Equatable {
    /// Which arguments are keys.
    enum Position: Sendable, Equatable {
        /// None: the command goes to any master (`PING`, `INFO`, `CLUSTER …`).
        case none
        /// Every argument after the name (`DEL`, `EXISTS`, `MGET`).
        case all
        /// The keys a script names: `EVALSHA sha numkeys key…`.
        case script
        /// The argument after a subcommand (`MEMORY USAGE key`, `OBJECT ENCODING key`).
        case afterSubcommand
        /// The first argument after the name (every other command).
        case first
    }

    var position: Position
    /// Whether the command only reads (a batch of reads needs no replica's confirmation).
    var isRead: Bool

    /// The keys and reading of the command called `name` (any case).
    init(name: String) {
        if let known = Self.table[name] ?? Self.table[name.uppercased()] {
            self = known
        } else {
            self.init(position: .first, isRead: false)
        }
    }

    init(position: Position, isRead: Bool) {
        self.position = position
        self.isRead = isRead
    }

    /// The keys and reading of `command`; a command without a name writes nothing and has no key.
    init(command: [RedisArgument]) {
        guard let first = command.first else {
            self.init(position: .none, isRead: true)
            return
        }
        self.init(name: Self.text(first))
    }

    /// The slot of `command`, whose keys and reading are `self`: its keys' one slot, or `nil`
    /// for a command without keys.
    ///
    /// - Throws: ``RedisClientError/Code/crossSlot`` when its keys hash to different slots.
    func slot(of command: [RedisArgument]) throws(RedisClientError) -> RedisHashSlot? {
        switch position {
        case .none:
            return nil
        case .all:
            return try Self.slot(ofKeys: command.dropFirst(), what: "the keys of \(Self.text(command[0]).uppercased())")
        case .script:
            guard command.count >= 3, let count = Self.integer(command[2]), count >= 0, command.count >= 3 + count else { return nil }
            return try Self.slot(ofKeys: command[3..<(3 + count)], what: "the keys of \(Self.text(command[0]).uppercased())")
        case .afterSubcommand:
            return command.count >= 3 ? RedisHashSlot(key: command[2]) : nil
        case .first:
            return command.count >= 2 ? RedisHashSlot(key: command[1]) : nil
        }
    }

    /// The slot of each command of a batch, in order.
    ///
    /// - Throws: ``RedisClientError/Code/crossSlot`` for the first command whose keys hash to
    ///   different slots.
    static func slots(of commands: [[RedisArgument]]) throws(RedisClientError) -> [RedisHashSlot?] {
        var slots: [RedisHashSlot?] = []
        slots.reserveCapacity(commands.count)
        var last: (name: RedisArgument, keys: RedisCommandKeys)?
        for command in commands {
            let keys: RedisCommandKeys
            if let last, let name = command.first, last.name == name {
                keys = last.keys
            } else {
                keys = RedisCommandKeys(command: command)
                last = command.first.map { ($0, keys) }
            }
            slots.append(try keys.slot(of: command))
        }
        return slots
    }

    /// The one slot of `keys` (`nil` when there are none).
    ///
    /// - Throws: ``RedisClientError/Code/crossSlot`` naming two keys that differ, and `what`.
    static func slot(ofKeys keys: some Collection<RedisArgument>, what: @autoclosure () -> String) throws(RedisClientError) -> RedisHashSlot? {
        guard let first = keys.first else { return nil }
        let slot = RedisHashSlot(key: first)
        if let other = keys.first(where: { RedisHashSlot(key: $0) != slot }) {
            throw RedisClientError(
                .crossSlot,
                message:
                    "\(what()) hash to different cluster slots (\(text(first)) → \(slot), \(text(other)) → \(RedisHashSlot(key: other))): give them one hash tag",
                isRetryable: false)
        }
        return slot
    }

    /// Every command name the table knows, in upper case; the rest take their first argument as
    /// their key and write.
    private static let table: [String: RedisCommandKeys] = {
        var table: [String: RedisCommandKeys] = [:]
        let keyless = [
            "PING", "INFO", "TIME", "DBSIZE", "SCRIPT", "CLUSTER", "FLUSHALL", "FLUSHDB", "CONFIG", "CLIENT", "COMMAND",
            "ECHO", "LASTSAVE", "SAVE", "BGSAVE", "SLOWLOG", "LATENCY", "ACL", "AUTH", "HELLO", "WAIT", "RANDOMKEY",
        ]
        let reads: Set<String> = [
            "GET", "MGET", "HGET", "HMGET", "HGETALL", "HEXISTS", "HLEN", "HSCAN", "SMISMEMBER", "SISMEMBER", "SMEMBERS", "SCARD",
            "BITFIELD_RO", "BITCOUNT", "GETBIT", "SSCAN", "EXISTS", "PTTL", "TTL", "TYPE", "STRLEN", "ZCARD", "ZRANGE",
            "ZRANGEBYSCORE", "ZSCORE", "ZSCAN", "LLEN", "LRANGE", "KEYS", "SCAN", "MEMORY", "OBJECT", "INFO", "PING", "DBSIZE",
            "TIME", "CLUSTER", "ECHO", "ASKING",
        ]
        for name in keyless { table[name] = RedisCommandKeys(position: .none, isRead: reads.contains(name)) }
        for name in ["DEL", "UNLINK", "EXISTS", "TOUCH", "MGET", "WATCH"] {
            table[name] = RedisCommandKeys(position: .all, isRead: reads.contains(name))
        }
        for name in ["EVALSHA", "EVAL", "EVALSHA_RO", "EVAL_RO", "FCALL", "FCALL_RO"] {
            table[name] = RedisCommandKeys(position: .script, isRead: false)
        }
        for name in ["MEMORY", "OBJECT"] { table[name] = RedisCommandKeys(position: .afterSubcommand, isRead: true) }
        for name in reads where table[name] == nil { table[name] = RedisCommandKeys(position: .first, isRead: true) }
        return table
    }()

    private static func integer(_ argument: RedisArgument) -> Int? {
        if case .integer(let value) = argument { return value }
        return Int(text(argument))
    }

    static func text(_ argument: RedisArgument) -> String {
        switch argument {
        case .string(let string): string
        case .integer(let value): String(value)
        case .bytes(let bytes): String(decoding: bytes, as: UTF8.self)
        }
    }
}
