import FlowControl
import Foundation
import PushCore
import Redis

/// The newest dead letters of each job and app, for reading them back through the API (the
/// console). `push.dlq` stays the record of every letter; this is a bounded view of it.
///
/// A notification's letter (it names a token and its job) is listed under its job, in the job's
/// slot, `pf:{job:<jobID>}:dead-letters`; any other letter (a message that could not be
/// processed: a job that may never have been stored, a chunk, a feedback event) under its app,
/// `pf:{<app>}:dead-letters`, even when it names a job: a job that failed validation has no
/// spec, so only its app can show it. Each is a LIST of the letters' JSON, newest first, at most
/// ``maxLetters``, expiring ``timeToLive`` after its last letter (a job's keys' TTL).
package final class DeadLetterLog: Sendable {
    /// The most letters one job or app keeps; older ones are dropped first.
    package static let maxLetters = 1_000
    /// The most bytes of one letter's JSON: a longer one keeps the first bytes of its
    /// ``DeadLetter/original`` (``DeadLetter/jsonData(within:)``), so 1,000 letters take at most
    /// about 4 MB.
    package static let maxLetterBytes = 4_096

    /// How long a list lives after its last letter.
    package let timeToLive: Duration
    let client: any RedisCommands

    /// Creates a log over `client`.
    ///
    /// - Parameter timeToLive: the TTL of each list (at least 1 ms); default 7 days, as a job's keys.
    package init(client: any RedisCommands, timeToLive: Duration = .seconds(7 * 24 * 3600)) {
        precondition(timeToLive >= .milliseconds(1), "timeToLive must be at least 1 ms")
        self.client = client
        self.timeToLive = timeToLive
    }

    /// Lists `letters`, given oldest first: one script call per list, pipelined.
    ///
    /// - Throws: ``StoreError`` naming `letters[i].jobID` or `letters[i].app` when a letter's
    ///   list cannot be named (an invalid job id or app, or a letter that names neither a
    ///   notification's job nor an app); nothing is written then. `RedisClientError`.
    package func record(_ letters: [DeadLetter]) async throws {
        var keys: [String] = []
        var byKey: [String: [Data]] = [:]
        for (index, letter) in letters.enumerated() {
            let key = try Self.key(of: letter, field: "letters[\(index)]")
            if byKey[key] == nil { keys.append(key) }
            byKey[key, default: []].append(letter.jsonData(within: Self.maxLetterBytes))
        }
        let calls = keys.map { key in
            // Only the newest letters of a list would survive its trim.
            let entries = byKey[key, default: []].suffix(Self.maxLetters)
            return RedisScriptCall(
                Self.recordScript, keys: [.string(key)],
                arguments: [.integer(Self.maxLetters), .string(String(timeToLive.wholeMilliseconds))] + entries.map { .bytes(Array($0)) })
        }
        _ = try await client.runScripts(calls)
    }

    /// The newest letters of job `jobID`'s notifications, newest first, at most `limit`.
    ///
    /// - Throws: ``StoreError`` naming `jobID` or `limit`, or `unexpectedReply` for an entry that
    ///   is not a letter; `RedisClientError`.
    package func letters(jobID: String, limit: Int) async throws -> [DeadLetter] {
        try StoreValidation.jobID(jobID)
        return try await read(JobKeyspace(jobID: jobID).deadLetters, limit: limit, of: "job \(jobID)")
    }

    /// The newest letters listed under `app` (not under one of its jobs), newest first, at most `limit`.
    ///
    /// - Throws: ``StoreError`` naming `app` or `limit`, or `unexpectedReply` for an entry that is
    ///   not a letter; `RedisClientError`.
    package func letters(app: String, limit: Int) async throws -> [DeadLetter] {
        try StoreValidation.app(app)
        return try await read(Self.key(app: app), limit: limit, of: "app \(app)")
    }

    /// Whether `jobID` may name a job here (the store's job id rule).
    package static func isValid(jobID: String) -> Bool {
        (try? StoreValidation.jobID(jobID)) != nil
    }

    /// Whether `app` may name an app here (the store's app id rule).
    package static func isValid(app: String) -> Bool {
        (try? StoreValidation.app(app)) != nil
    }

    private func read(_ key: String, limit: Int, of owner: String) async throws -> [DeadLetter] {
        try StoreValidation.atLeast(1, limit, field: "limit")
        let reply = try await client.send("LRANGE", .string(key), "0", .string(String(limit - 1)))
        guard let entries = reply.array else {
            throw StoreError.unexpected(reply, from: "LRANGE of the dead letters of \(owner)")
        }
        return try entries.map { entry in
            guard let bytes = entry.bytes, let letter = try? DeadLetter.decode(from: Data(bytes)) else {
                throw StoreError.unexpected(entry, from: "LRANGE of the dead letters of \(owner)")
            }
            return letter
        }
    }

    /// The list of `letter` (see the type's description).
    static func key(of letter: DeadLetter, field: String) throws(StoreError) -> String {
        if letter.token != nil, let jobID = letter.jobID {
            try StoreValidation.jobID(jobID, field: field + ".jobID")
            return JobKeyspace(jobID: jobID).deadLetters
        }
        guard let app = letter.app else {
            throw StoreError(.invalidArgument, field: field, message: "names neither a notification's job nor an app: no list holds it")
        }
        try StoreValidation.app(app, field: field + ".app")
        return key(app: app)
    }

    /// `pf:{<app>}:dead-letters`
    static func key(app: String) -> String {
        "pf:{\(app)}:dead-letters"
    }

    /// KEYS: the list. ARGV: the most letters kept, the TTL (ms), then the letters, oldest first
    /// (at most the most kept). Returns the list's length.
    static let recordScript = RedisScript(
        """
        redis.call('LPUSH', KEYS[1], unpack(ARGV, 3))
        redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[1]) - 1)
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        return redis.call('LLEN', KEYS[1])
        """
    )
}
