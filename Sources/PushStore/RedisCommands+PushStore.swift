import Redis

extension RedisClient {
    /// Runs script calls in one pipeline on one pooled connection; any script error throws
    /// (`RedisClientError.serverError`), though the other calls may have run. The send-stage
    /// components share it; ``DeviceRegistry`` has its own copy.
    func runScripts(_ calls: [RedisScriptCall]) async throws -> [RedisReply] {
        guard !calls.isEmpty else { return [] }
        let replies = try await withConnection { connection in
            try await connection.evalScripts(calls)
        }
        if let message = replies.lazy.compactMap(\.errorMessage).first {
            throw RedisClientError(.serverError, message: message)
        }
        return replies
    }

    /// Runs one script call and returns its reply; an error reply throws.
    func runScript(_ script: RedisScript, keys: [RedisArgument], arguments: [RedisArgument]) async throws -> RedisReply {
        try await runScripts([RedisScriptCall(script, keys: keys, arguments: arguments)])[0]
    }

    /// Sends plain commands in one pipeline; an error reply throws.
    func checkedPipeline(_ commands: [[RedisArgument]]) async throws -> [RedisReply] {
        guard !commands.isEmpty else { return [] }
        let replies = try await pipeline(commands)
        if let message = replies.lazy.compactMap(\.errorMessage).first {
            throw RedisClientError(.serverError, message: message)
        }
        return replies
    }
}
