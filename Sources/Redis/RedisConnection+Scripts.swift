extension RedisConnection {
    /// Runs `script` with `EVALSHA`, loading it first if needed (see ``RedisScript``).
    ///
    /// - Throws: ``RedisClientError`` — `serverError` with the server's message when the script
    ///   fails (`ERR user_script:1: …`), and the errors of ``send(_:)``.
    public func evalScript(
        _ script: RedisScript,
        keys: [RedisArgument] = [],
        arguments: [RedisArgument] = []
    ) async throws -> RedisReply {
        let reply = try await evalScripts([RedisScriptCall(script, keys: keys, arguments: arguments)])[0]
        if case .error(let message) = reply {
            throw RedisClientError(.serverError, message: message)
        }
        return reply
    }

    /// Runs script calls in one pipeline, in order, and returns their replies; a script's error
    /// comes back in place as ``RedisReply/error(_:)``, like ``pipeline(_:)``.
    ///
    /// Scripts not yet loaded are loaded first (one pipeline for all of them). Calls that meet
    /// `NOSCRIPT` (the server lost its script cache) are sent again, in order, after one reload.
    public func evalScripts(_ calls: [RedisScriptCall]) async throws -> [RedisReply] {
        guard !calls.isEmpty else { return [] }
        try await load(uniqueScripts(calls.lazy.filter { $0.script.sha1 == nil }))
        var replies = try await pipeline(calls.map { $0.command(sha1: $0.script.sha1!) })

        let failed = replies.indices.filter { replies[$0].errorMessage?.hasPrefix("NOSCRIPT") == true }
        guard !failed.isEmpty else { return replies }
        try await load(uniqueScripts(failed.lazy.map { calls[$0] }))
        let retried = try await pipeline(failed.map { calls[$0].command(sha1: calls[$0].script.sha1!) })
        for (index, reply) in zip(failed, retried) {
            replies[index] = reply
        }
        return replies
    }

    private func uniqueScripts(_ calls: some Sequence<RedisScriptCall>) -> [RedisScript] {
        var seen = Set<ObjectIdentifier>()
        return calls.map(\.script).filter { seen.insert(ObjectIdentifier($0)).inserted }
    }

    /// `SCRIPT LOAD`s scripts in one pipeline and remembers their SHA-1s.
    private func load(_ scripts: [RedisScript]) async throws {
        guard !scripts.isEmpty else { return }
        let replies = try await pipeline(scripts.map { ["SCRIPT", "LOAD", .string($0.source)] })
        for (script, reply) in zip(scripts, replies) {
            if let message = reply.errorMessage {
                throw RedisClientError(.serverError, message: message)
            }
            guard let sha1 = reply.string else {
                throw RedisClientError(.protocolError, message: "SCRIPT LOAD answered \(reply), not a SHA-1")
            }
            script.remember(sha1: sha1)
        }
    }
}
