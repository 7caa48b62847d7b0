import APNsCore
import Redis

extension JobStore {
    /// The counter that marks a job as cancelled: set once by ``cancel(jobID:)``; every stage
    /// stops sending the job when it sees it.
    public static let cancelRequestedCounter = "cancel-requested"

    /// Cancels a job: sets ``cancelRequestedCounter`` (to the time of the request, ms since
    /// 1970) unless it is set already. The expand stage stops publishing the job's chunks and the
    /// send stage and resend drainer settle its remaining tokens as `cancelled` instead of
    /// sending them.
    ///
    /// - Returns: whether the job was cancelled now (false: it was cancelled before).
    /// - Throws: ``DeviceRegistryError`` naming `jobID`; `RedisClientError`.
    @discardableResult
    public func cancel(jobID: String, at milliseconds: Int64) async throws -> Bool {
        try RegistryValidation.jobID(jobID)
        let reply = try await client.runScript(
            JobScripts.cancel,
            keys: [.string(JobKeyspace(jobID: jobID).stats)],
            arguments: [.string(Self.cancelRequestedCounter), .string(String(milliseconds)), .string(String(specTimeToLive.wholeMilliseconds))]
        )
        guard let new = reply.int else {
            throw DeviceRegistry.unexpected(reply, from: "the cancel script")
        }
        return new == 1
    }

    /// Whether the job was cancelled (`HEXISTS` of ``cancelRequestedCounter``).
    ///
    /// - Throws: ``DeviceRegistryError`` naming `jobID`; `RedisClientError`.
    public func isCancelled(jobID: String) async throws -> Bool {
        try RegistryValidation.jobID(jobID)
        let reply = try await client.send("HEXISTS", .string(JobKeyspace(jobID: jobID).stats), .string(Self.cancelRequestedCounter))
        guard let exists = reply.int else {
            throw DeviceRegistry.unexpected(reply, from: "HEXISTS of job \(jobID)'s cancellation")
        }
        return exists == 1
    }

    /// Counts a device's receipt for the job (its notification service extension reported the
    /// notification delivered, or the user opened it): each device once per event, in one
    /// script (a set of tokens per event in the job's slot, and the counter named after the
    /// event).
    ///
    /// - Returns: whether it was counted now (false: this device reported this event before).
    /// - Throws: ``DeviceRegistryError`` naming `jobID`; `RedisClientError`.
    @discardableResult
    public func recordReceipt(jobID: String, token: DeviceToken, event: ReceiptEvent) async throws -> Bool {
        try RegistryValidation.jobID(jobID)
        let keys = JobKeyspace(jobID: jobID)
        let reply = try await client.runScript(
            JobScripts.recordReceipt,
            keys: [.string(keys.receipts(event)), .string(keys.stats)],
            arguments: [.bytes(token.markerBytes), .string(event.rawValue), .string(String(specTimeToLive.wholeMilliseconds))]
        )
        guard let new = reply.int else {
            throw DeviceRegistry.unexpected(reply, from: "the record-receipt script")
        }
        return new == 1
    }
}
