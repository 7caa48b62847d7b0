import FlowControl
import Redis

extension JobStore {
    /// What ``update(jobID:_:)`` did.
    package struct ControlUpdate: Sendable, Hashable {
        /// The state the command was applied to.
        package var before: JobControl
        /// The state now (equal to `before` when the command changed nothing).
        package var after: JobControl

        /// Whether the command changed the state.
        package var changed: Bool { before != after }
    }

    /// What became of registry changes offered with ``offerEffects(jobID:_:)``.
    package struct EffectsAnswer: Sendable, Hashable {
        /// The job's gate when they were offered: under `apply` the caller publishes them.
        package var gate: JobControl.Gate
        /// Changes held for the job, waiting (under `apply`, to be released by the caller).
        package var held: Int
        /// The job's state, as the store saw it.
        package var state: JobControl.State
    }

    /// The job's control state; a job never changed is `running` and `watching`.
    ///
    /// - Throws: ``StoreError`` naming `jobID`, or `unexpectedReply` for a field no
    ///   version of PushFleet writes; `RedisClientError`.
    package func control(jobID: String) async throws -> JobControl {
        try StoreValidation.jobID(jobID)
        let what = "HGETALL of job \(jobID)'s control state"
        let values = try await hashFields(JobKeyspace(jobID: jobID).control, what: what)
        guard let control = JobControl(fields: values) else {
            throw StoreError(.unexpectedReply, field: nil, message: "\(what): \(values) is not a state")
        }
        return control
    }

    /// Applies `command` to the job's control state (``JobControl/applying(_:)``) and stores the
    /// result over the version it was computed from; when another process changed the state in
    /// between, the command is applied again to what that process wrote. A cancel also discards
    /// the registry changes held for the job.
    ///
    /// - Throws: ``JobControl/Refusal`` when the command does not apply;
    ///   ``StoreError`` naming `jobID`; `RedisClientError`.
    @discardableResult
    package func update(jobID: String, _ command: JobControl.Command) async throws -> ControlUpdate {
        let keys = JobKeyspace(jobID: jobID)
        while true {
            let before = try await control(jobID: jobID)
            guard let after = try before.applying(command) else {
                return ControlUpdate(before: before, after: before)
            }
            var cancelledAt = ""
            if case .cancel(_, let at) = command {
                cancelledAt = String(at)
            }
            var arguments: [RedisArgument] = [
                .integer(before.version), .string(String(specTimeToLive.wholeMilliseconds)), .string(cancelledAt),
            ]
            for (field, value) in after.fields {
                arguments.append(.string(field))
                arguments.append(.string(value))
            }
            let reply = try await client.runScript(
                JobScripts.writeControl, keys: [.string(keys.control), .string(keys.stats), .string(keys.held)], arguments: arguments)
            guard let written = reply.int else {
                throw StoreError.unexpected(reply, from: "the write-control script")
            }
            if written == 1 {
                return ControlUpdate(before: before, after: after)
            }
        }
    }

    /// Offers registry changes a job's answers call for (serialised `push.feedback` events)
    /// under its gate: held while it is watched or paused, discarded (and counted) once it is
    /// cancelled; under `apply` nothing is stored and the caller publishes them.
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func offerEffects(jobID: String, _ events: [[UInt8]]) async throws -> EffectsAnswer {
        try StoreValidation.jobID(jobID)
        let keys = JobKeyspace(jobID: jobID)
        let reply = try await client.runScript(
            JobScripts.offerEffects, keys: [.string(keys.control), .string(keys.stats), .string(keys.held)],
            arguments: [.string(String(specTimeToLive.wholeMilliseconds))] + events.map { .bytes($0) })
        guard let fields = reply.array, fields.count == 3,
            let gate = fields[0].string.flatMap(JobControl.Gate.init(rawValue:)), let held = fields[1].int,
            let state = fields[2].string.flatMap(JobControl.State.init(rawValue:))
        else {
            throw StoreError.unexpected(reply, from: "the offer-effects script")
        }
        return EffectsAnswer(gate: gate, held: Int(held), state: state)
    }

    /// Takes up to `limit` of the job's held registry changes, oldest first, for the caller to
    /// publish; only while the job's gate is `apply` (empty otherwise). A change taken is gone
    /// from Redis: a caller that dies before publishing it loses a registry change, never a
    /// device.
    ///
    /// - Throws: ``StoreError`` naming `jobID` or `limit`; `RedisClientError`.
    package func takeHeldEffects(jobID: String, limit: Int) async throws -> [[UInt8]] {
        try StoreValidation.jobID(jobID)
        try StoreValidation.atLeast(1, limit, field: "limit")
        let keys = JobKeyspace(jobID: jobID)
        let reply = try await client.runScript(
            JobScripts.takeHeldEffects, keys: [.string(keys.control), .string(keys.held)], arguments: [.integer(limit)])
        guard let items = reply.array else {
            throw StoreError.unexpected(reply, from: "the take-held-effects script")
        }
        return try items.map { item in
            guard let bytes = item.bytes else { throw StoreError.unexpected(reply, from: "the take-held-effects script") }
            return bytes
        }
    }
}

extension JobControl {
    /// The hash fields the state is stored as (`""`: the field is deleted), `gate` included
    /// for the scripts that obey it.
    var fields: [(String, String)] {
        [
            ("state", state.rawValue), ("breaker", breaker.rawValue), ("reason", reason ?? ""),
            ("paused-by", pausedBy?.rawValue ?? ""), ("changed-at", changedAt.map(String.init) ?? ""),
            ("rate", ratePerSecond.map { String($0) } ?? ""), ("gate", gate.rawValue), ("version", String(version)),
        ]
    }

    /// Reads the stored fields; `nil` when one holds a value no version of PushFleet writes.
    init?(fields: [String: String]) {
        self.init()
        if let raw = fields["state"] {
            guard let state = State(rawValue: raw) else { return nil }
            self.state = state
        }
        if let raw = fields["breaker"] {
            guard let breaker = Breaker(rawValue: raw) else { return nil }
            self.breaker = breaker
        }
        reason = fields["reason"]
        if let raw = fields["paused-by"] {
            guard let actor = Actor(rawValue: raw) else { return nil }
            pausedBy = actor
        }
        if let raw = fields["changed-at"] {
            guard let value = Int64(raw) else { return nil }
            changedAt = value
        }
        if let raw = fields["rate"] {
            guard let value = Double(raw), value.isFinite, value > 0 else { return nil }
            ratePerSecond = value
        }
        if let raw = fields["version"] {
            guard let value = Int(raw) else { return nil }
            version = value
        }
    }
}
