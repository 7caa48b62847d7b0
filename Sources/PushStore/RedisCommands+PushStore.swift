import Redis

extension RedisCommands {
    /// Runs script calls pipelined (in a cluster: on each call's node, all nodes at once); any
    /// script error throws (`RedisClientError.serverError`), though the other calls may have run.
    /// Every store uses it.
    func runScripts(_ calls: [RedisScriptCall]) async throws -> [RedisReply] {
        guard !calls.isEmpty else { return [] }
        let replies = try await evalScripts(calls)
        if let message = replies.lazy.compactMap(\.errorMessage).first {
            throw RedisClientError(.serverError, message: message)
        }
        return replies
    }

    /// Runs one script call and returns its reply; an error reply throws.
    func runScript(_ script: RedisScript, keys: [RedisArgument], arguments: [RedisArgument]) async throws -> RedisReply {
        try await runScripts([RedisScriptCall(script, keys: keys, arguments: arguments)])[0]
    }

    /// Sends plain commands pipelined; an error reply throws.
    func checkedPipeline(_ commands: [[RedisArgument]]) async throws -> [RedisReply] {
        guard !commands.isEmpty else { return [] }
        let replies = try await pipeline(commands)
        if let message = replies.lazy.compactMap(\.errorMessage).first {
            throw RedisClientError(.serverError, message: message)
        }
        return replies
    }
}
