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
        try await recordReceipts(jobID: jobID, tokens: [token], event: event) == 1
    }

    /// Counts the receipts of many devices for the job at once (``recordReceipt(jobID:token:event:)``
    /// for each, in one script): the gateway's acks of a `push.online` message.
    ///
    /// - Returns: how many were counted now (devices that had not reported this event before).
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    @discardableResult
    package func recordReceipts(jobID: String, tokens: [DeviceToken], event: ReceiptEvent) async throws -> Int {
        try StoreValidation.jobID(jobID)
        guard !tokens.isEmpty else { return 0 }
        let keys = JobKeyspace(jobID: jobID)
        var arguments: [RedisArgument] = [.string(event.rawValue), .string(String(specTimeToLive.wholeMilliseconds))]
        arguments.reserveCapacity(2 + tokens.count)
        for token in tokens { arguments.append(.bytes(token.markerBytes)) }
        let reply = try await client.runScript(
            JobScripts.recordReceipt, keys: [.string(keys.receipts(event)), .string(keys.stats)], arguments: arguments)
        guard let new = reply.int else {
            throw StoreError.unexpected(reply, from: "the record-receipt script")
        }
        return Int(new)
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
