/// What PushFleet's stores need from Redis, whatever its shape: a single server
/// (``RedisClient``) or a Redis Cluster (``RedisClusterClient``). ``send(_:)`` throws an error
/// reply (`ERR …`, `WRONGTYPE …`) as ``RedisClientError/Code/serverError``; ``pipeline(_:)`` and
/// ``evalScripts(_:)`` return error replies (a script's error too) as ``RedisReply/error(_:)``
/// values in their place, so the other answers are not lost. Failures of the transport throw
/// ``RedisClientError``.
///
/// In a cluster each command goes to its key's slot (the first key of the command, the keys of a
/// script call): the keys of one command or script call must share a slot (use a hash tag),
/// otherwise the call throws ``RedisClientError/Code/crossSlot`` before anything is sent.
public protocol RedisCommands: Sendable {
    /// Sends one command; an error reply throws ``RedisClientError/Code/serverError``.
    func send(_ arguments: [RedisArgument]) async throws -> RedisReply

    /// Sends commands pipelined; the answers come back in the commands' order. In a cluster the
    /// commands are split per node and sent to all of them at once.
    func pipeline(_ commands: [[RedisArgument]]) async throws -> [RedisReply]

    /// Runs scripts (`EVALSHA`, loading a script where a server does not know it yet),
    /// pipelined; the answers come back in the calls' order.
    func evalScripts(_ calls: [RedisScriptCall]) async throws -> [RedisReply]

    /// Closes the connections; later calls throw ``RedisClientError/Code/clientShutdown``.
    func shutdown() async
}

extension RedisCommands {
    /// Sends one command: `send("INCR", "counter")`.
    public func send(_ arguments: RedisArgument...) async throws -> RedisReply {
        try await send(arguments)
    }
}

extension RedisClient: RedisCommands {
    /// Runs scripts pipelined on one pooled connection; see ``RedisConnection/evalScripts(_:)``.
    public func evalScripts(_ calls: [RedisScriptCall]) async throws -> [RedisReply] {
        try await withConnection { try await $0.evalScripts(calls) }
    }
}
