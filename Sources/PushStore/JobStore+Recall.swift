public import APNsCore
import Foundation
public import PushCore
import Redis

extension JobStore {
    /// Adds tokens whose resend APNs accepted to the job's `accepted-resends` set (a resend has
    /// no position in the sent state: its position's first outcome, `retried`, set the refused
    /// bit), and refreshes its TTL.
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func recordAcceptedResends(jobID: String, tokens: [DeviceToken]) async throws {
        try StoreValidation.jobID(jobID)
        guard !tokens.isEmpty else { return }
        let key = RedisArgument.string(JobKeyspace(jobID: jobID).acceptedResends)
        _ = try await client.checkedPipeline([
            ["SADD", key] + tokens.map { .bytes($0.markerBytes) },
            ["PEXPIRE", key, .integer(Int(timeToLiveMilliseconds))],
        ])
    }

    /// The tokens whose resend of the job APNs accepted (``recordAcceptedResends(jobID:tokens:)``).
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func acceptedResends(jobID: String) async throws -> Set<DeviceToken> {
        try StoreValidation.jobID(jobID)
        let reply = try await client.send("SMEMBERS", .string(JobKeyspace(jobID: jobID).acceptedResends))
        guard let members = reply.array else { throw StoreError.unexpected(reply, from: "SMEMBERS of job \(jobID)'s accepted resends") }
        var tokens = Set<DeviceToken>()
        for member in members {
            guard let bytes = member.bytes, let token = DeviceToken(markerBytes: bytes) else {
                throw StoreError.unexpected(reply, from: "SMEMBERS of job \(jobID)'s accepted resends")
            }
            tokens.insert(token)
        }
        return tokens
    }

    /// The job that recalls `jobID`, and how.
    package struct RecallLink: Sendable, Hashable {
        package var jobID: String
        package var mode: JobRecall.Mode

        package init(jobID: String, mode: JobRecall.Mode) {
            self.jobID = jobID
            self.mode = mode
        }
    }

    /// Names `recallID` as the recall of `jobID` unless the job has one already (`SET NX`, with
    /// the job's TTL): a campaign is recalled once.
    ///
    /// - Returns: nil when `recallID` is the job's recall now; else the recall it had.
    /// - Throws: ``StoreError`` naming `jobID` or `recallID`; `RedisClientError`.
    package func claimRecall(of jobID: String, by recallID: String, mode: JobRecall.Mode) async throws -> RecallLink? {
        try StoreValidation.jobID(jobID)
        try StoreValidation.jobID(recallID)
        let key = RedisArgument.string(JobKeyspace(jobID: jobID).recalledBy)
        let reply = try await client.send(
            "SET", key, .string("\(mode.rawValue) \(recallID)"), "NX", "GET", "PX", .integer(Int(timeToLiveMilliseconds)))
        if reply.isNull { return nil }
        guard let link = reply.string.flatMap(Self.recallLink) else {
            throw StoreError.unexpected(reply, from: "SET NX GET of job \(jobID)'s recall")
        }
        return link
    }

    /// Gives up a claim made by ``claimRecall(of:by:mode:)`` that could not be published, so
    /// that the recall can be asked for again.
    package func releaseRecall(of jobID: String, by recallID: String, mode: JobRecall.Mode) async throws {
        try StoreValidation.jobID(jobID)
        _ = try await client.runScript(
            Self.releaseRecallScript, keys: [.string(JobKeyspace(jobID: jobID).recalledBy)], arguments: [.string("\(mode.rawValue) \(recallID)")])
    }

    /// A stored job's spec, parsed (nil when unknown, expired or not JSON), and the job that
    /// recalls it: one round trip (both keys are in the job's slot), for its report.
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func specAndRecall(jobID: String) async throws -> (json: JSONValue?, recalledBy: RecallLink?) {
        try StoreValidation.jobID(jobID)
        let keys = JobKeyspace(jobID: jobID)
        let replies = try await client.checkedPipeline([["GET", .string(keys.spec)], ["GET", .string(keys.recalledBy)]])
        let json = replies[0].bytes.flatMap { try? JSONValue(parsing: Data($0)) }
        if replies[1].isNull { return (json, nil) }
        guard let link = replies[1].string.flatMap(Self.recallLink) else {
            throw StoreError.unexpected(replies[1], from: "GET of job \(jobID)'s recall")
        }
        return (json, link)
    }

    /// The job that recalls `jobID`, if any.
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func recalledBy(jobID: String) async throws -> RecallLink? {
        try StoreValidation.jobID(jobID)
        let reply = try await client.send("GET", .string(JobKeyspace(jobID: jobID).recalledBy))
        if reply.isNull { return nil }
        guard let link = reply.string.flatMap(Self.recallLink) else { throw StoreError.unexpected(reply, from: "GET of job \(jobID)'s recall") }
        return link
    }

    private static func recallLink(_ value: String) -> RecallLink? {
        guard let space = value.firstIndex(of: " "), let mode = JobRecall.Mode(rawValue: String(value[..<space])) else { return nil }
        let jobID = String(value[value.index(after: space)...])
        return jobID.isEmpty ? nil : RecallLink(jobID: jobID, mode: mode)
    }

    /// KEYS: recalled-by. ARGV: the value to remove. Deletes the key only if it holds it.
    private static let releaseRecallScript = RedisScript(
        """
        if redis.call('GET', KEYS[1]) == ARGV[1] then
          return redis.call('DEL', KEYS[1])
        end
        return 0
        """
    )
}
