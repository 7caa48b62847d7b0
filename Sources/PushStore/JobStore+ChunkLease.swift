import FlowControl
import Redis

/// Chunk leases: at most one sender works on a chunk of a job at a time.
///
/// A chunk can reach two senders at once: Kafka hands it to its partition's next owner while the
/// previous one still finishes it, or the expand stage publishes it again after a restart and
/// both copies are in flight. Sent markers only cover what a sender settled before the other one
/// looked, so both would send the rest. A lease closes that gap: a sender takes the chunk's lease
/// before reading the markers and keeps it until its outcomes are settled. A sender that dies
/// holding one loses it when it expires.
extension JobStore {
    /// Takes the lease of chunk `chunkID` of job `jobID` for `holder`, or extends it when
    /// `holder` has it already: `duration` from now. Another holder's live lease is left alone.
    ///
    /// - Returns: whether `holder` holds the lease now.
    /// - Throws: ``StoreError`` naming `jobID`, `chunkID`, `holder` or `duration`;
    ///   `RedisClientError`.
    package func leaseChunk(jobID: String, chunkID: String, holder: String, for duration: Duration) async throws -> Bool {
        let milliseconds = duration.wholeMilliseconds
        try StoreValidation.atLeast(Int64(1), milliseconds, field: "duration")
        return try await runLeaseScript(
            JobScripts.leaseChunk, named: "lease-chunk", jobID: jobID, chunkID: chunkID, holder: holder,
            then: [.string(String(milliseconds))])
    }

    /// Ends `holder`'s lease of chunk `chunkID` of job `jobID`; a lease that expired or passed to
    /// another holder is left alone.
    ///
    /// - Returns: whether `holder` still held it.
    /// - Throws: ``StoreError`` naming `jobID`, `chunkID` or `holder`; `RedisClientError`.
    @discardableResult
    package func releaseChunk(jobID: String, chunkID: String, holder: String) async throws -> Bool {
        try await runLeaseScript(JobScripts.releaseChunk, named: "release-chunk", jobID: jobID, chunkID: chunkID, holder: holder)
    }

    /// Checks the names, runs a lease script on the chunk's key with `holder` and `more` as its
    /// arguments, and reads its 1 or 0.
    private func runLeaseScript(
        _ script: RedisScript, named name: String, jobID: String, chunkID: String, holder: String,
        then more: [RedisArgument] = []
    ) async throws -> Bool {
        try StoreValidation.jobID(jobID)
        try StoreValidation.name(chunkID, field: "chunkID", what: "chunk id")
        try StoreValidation.name(holder, field: "holder", what: "lease holder")
        let reply = try await client.runScript(
            script, keys: [.string(JobKeyspace(jobID: jobID).lease(chunkID: chunkID))], arguments: [.string(holder)] + more)
        guard let flag = reply.int else {
            throw StoreError.unexpected(reply, from: "the \(name) script")
        }
        return flag == 1
    }
}
