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
        let sha1: String
        if let loaded = script.sha1 {
            sha1 = loaded
        } else {
            sha1 = try await load(script)
        }
        var reply = try await pipeline([evalSHA(sha1, keys: keys, arguments: arguments)])[0]
        if reply.errorMessage?.hasPrefix("NOSCRIPT") == true {
            let reloaded = try await load(script)
            reply = try await pipeline([evalSHA(reloaded, keys: keys, arguments: arguments)])[0]
        }
        if case .error(let message) = reply {
            throw RedisClientError(.serverError, message: message)
        }
        return reply
    }

    private func load(_ script: RedisScript) async throws -> String {
        let reply = try await send("SCRIPT", "LOAD", .string(script.source))
        guard let sha1 = reply.string else {
            throw RedisClientError(.protocolError, message: "SCRIPT LOAD answered \(reply), not a SHA-1")
        }
        script.remember(sha1: sha1)
        return sha1
    }

    private func evalSHA(_ sha1: String, keys: [RedisArgument], arguments: [RedisArgument]) -> [RedisArgument] {
        ["EVALSHA", .string(sha1), .integer(keys.count)] + keys + arguments
    }
}
