import APNsCore
import FlowControl
import Redis

extension JobStore {
    /// Cancels a job (``JobControl/Command/cancel(reason:at:)``): the expand stage stops
    /// publishing its chunks, the send stage and resend drainer settle its remaining tokens as
    /// `cancelled` instead of sending them, and the registry changes held for it are discarded.
    /// Sets ``JobCounter/cancelRequested`` to the time of the first request.
    ///
    /// - Returns: whether the job was cancelled now (false: it was cancelled before).
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    @discardableResult
    package func cancel(jobID: String, at milliseconds: Int64, reason: String = "cancelled by an operator") async throws -> Bool {
        try await update(jobID: jobID, .cancel(reason: reason, at: milliseconds)).changed
    }

    /// Whether the job was cancelled.
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func isCancelled(jobID: String) async throws -> Bool {
        try await control(jobID: jobID).state == .cancelled
    }

    /// Counts a device's receipt for the job (its notification service extension reported the
    /// notification delivered, or the user opened it): each device once per event, in one
    /// script (a set of tokens per event in the job's slot, and the counter named after the
    /// event).
    ///
    /// - Returns: whether it was counted now (false: this device reported this event before).
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    @discardableResult
    package func recordReceipt(jobID: String, token: DeviceToken, event: ReceiptEvent) async throws -> Bool {
        try StoreValidation.jobID(jobID)
        let keys = JobKeyspace(jobID: jobID)
        let reply = try await client.runScript(
            JobScripts.recordReceipt,
            keys: [.string(keys.receipts(event)), .string(keys.stats)],
            arguments: [.bytes(token.markerBytes), .string(event.rawValue), .string(String(specTimeToLive.wholeMilliseconds))]
        )
        guard let new = reply.int else {
            throw StoreError.unexpected(reply, from: "the record-receipt script")
        }
        return new == 1
    }
}

extension JobStore {
    /// The receipts `token` posted for each of `jobIDs` (`SISMEMBER` per job and event,
    /// pipelined; in a cluster each goes to its job's slot): a job whose receipts include the
    /// device is one the device is known to have been sent. Jobs without any are left out.
    ///
    /// - Throws: ``StoreError`` naming a job id; `RedisClientError`.
    package func receipts(of token: DeviceToken, jobIDs: [String]) async throws -> [String: Set<ReceiptEvent>] {
        for jobID in jobIDs { try StoreValidation.jobID(jobID) }
        let asked = jobIDs.flatMap { jobID in ReceiptEvent.allCases.map { (jobID, $0) } }
        guard !asked.isEmpty else { return [:] }
        let replies = try await client.pipeline(
            asked.map { jobID, event in
                ["SISMEMBER", .string(JobKeyspace(jobID: jobID).receipts(event)), .bytes(token.markerBytes)]
            })
        var found: [String: Set<ReceiptEvent>] = [:]
        for ((jobID, event), reply) in zip(asked, replies) {
            guard let member = reply.int else { throw StoreError.unexpected(reply, from: "SISMEMBER of the receipts of job \(jobID)") }
            if member == 1 { found[jobID, default: []].insert(event) }
        }
        return found
    }
}
