/// Whether a job may send, and what becomes of the registry changes its answers call for: the
/// job's control state, kept in Redis beside its statistics (``JobStore/control(jobID:)``) and
/// changed only through ``applying(_:)``, whose rules are these:
///
/// - A job starts `running` with its circuit breaker `watching`: the campaign's early answers
///   are judged, and the registry changes they call for (removals, suspect marks) are **held**.
/// - The breaker either clears the job (held changes are applied, later ones at once) or trips
///   it: the job is `paused` with the reason, before it burns its audience.
/// - An operator may pause any running job, resume a paused one, cancel it, or change its rate.
///   Resuming a job the breaker tripped clears the breaker (the operator judged the answers
///   genuine); resuming one an operator paused returns it to where it was.
/// - A cancelled job stays cancelled; its held changes are discarded (a misconfigured campaign
///   changes nothing in the registry).
///
/// ``gate`` is what the stores obey: hold, apply or discard a job's registry changes.
package struct JobControl: Sendable, Hashable {
    package enum State: String, Sendable, Hashable, CaseIterable {
        case running, paused, cancelled
    }

    /// The campaign circuit breaker's view of the job.
    package enum Breaker: String, Sendable, Hashable, CaseIterable {
        /// Its early answers are still being judged.
        case watching
        /// Judged sound, or resumed by an operator after a trip.
        case cleared
        /// Paused for its answers; stays so until an operator resumes or cancels it.
        case tripped
    }

    /// Who paused a job.
    package enum Actor: String, Sendable, Hashable, CaseIterable {
        case breaker, `operator`
    }

    /// What becomes of the registry changes a job's answers call for.
    package enum Gate: String, Sendable, Hashable, CaseIterable {
        /// Kept beside the job until it is cleared (then applied) or cancelled (then discarded).
        case hold
        /// Applied now.
        case apply
        /// Dropped and counted (``JobCounter/effectsDiscarded``).
        case discard
    }

    /// A change asked of the control state.
    package enum Command: Sendable, Hashable {
        /// The breaker judged the job's early answers sound.
        case clear
        /// The breaker judged them a misconfiguration.
        case trip(reason: String, at: Int64)
        /// An operator pauses the job.
        case pause(reason: String, at: Int64)
        /// An operator resumes a paused job.
        case resume(at: Int64)
        /// An operator (or the API) cancels the job.
        case cancel(reason: String, at: Int64)
        /// An operator sets the job's rate (notifications per second, > 0), or removes the
        /// setting with `nil`.
        case setRate(Double?)
    }

    /// A command that does not apply to the job's state.
    package struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        package enum Code: String, Sendable, Hashable {
            case notPaused = "not-paused"
            case cancelled
            case invalidRate = "invalid-rate"
        }

        package var code: Code
        package var message: String

        package init(code: Code, message: String) {
            self.code = code
            self.message = message
        }

        package var description: String { message }
    }

    package var state: State
    package var breaker: Breaker
    /// Why the job is paused or cancelled.
    package var reason: String?
    /// Who paused it (while paused).
    package var pausedBy: Actor?
    /// When the state last changed (ms since 1970).
    package var changedAt: Int64?
    /// The operator's rate for the job, if set: it replaces the job's own `throttle.rate-per-second`
    /// and, like it, nests inside the app's rate.
    package var ratePerSecond: Double?
    /// Counts the changes; the store writes a change only over the version it was computed from.
    package var version: Int

    /// A job nobody changed yet: running, watched by the breaker.
    package init(
        state: State = .running, breaker: Breaker = .watching, reason: String? = nil, pausedBy: Actor? = nil,
        changedAt: Int64? = nil, ratePerSecond: Double? = nil, version: Int = 0
    ) {
        self.state = state
        self.breaker = breaker
        self.reason = reason
        self.pausedBy = pausedBy
        self.changedAt = changedAt
        self.ratePerSecond = ratePerSecond
        self.version = version
    }

    package var gate: Gate {
        switch state {
        case .cancelled: .discard
        case .paused: .hold
        case .running: breaker == .watching ? .hold : .apply
        }
    }

    /// The state after `command`: `nil` when the command changes nothing (clearing a job that
    /// is not watched, tripping or pausing one that is paused already, cancelling one that is
    /// cancelled).
    ///
    /// - Throws: ``Refusal`` when the command does not apply: resuming a job that is not
    ///   paused, anything but cancelling on a cancelled job, a rate that is not finite and > 0.
    package func applying(_ command: Command) throws(Refusal) -> JobControl? {
        var next = self
        switch command {
        case .clear:
            guard state == .running, breaker == .watching else { return nil }
            next.breaker = .cleared
        case .trip(let reason, let at):
            guard state == .running else { return nil }
            next.state = .paused
            next.breaker = .tripped
            next.pausedBy = .breaker
            next.reason = reason
            next.changedAt = at
        case .pause(let reason, let at):
            switch state {
            case .cancelled: throw refusedAfterCancel("paused")
            case .paused: return nil
            case .running:
                next.state = .paused
                next.pausedBy = .operator
                next.reason = reason
                next.changedAt = at
            }
        case .resume(let at):
            switch state {
            case .cancelled: throw refusedAfterCancel("resumed")
            case .running: throw Refusal(code: .notPaused, message: "the job is not paused")
            case .paused:
                next.state = .running
                if breaker == .tripped { next.breaker = .cleared }
                next.pausedBy = nil
                next.reason = nil
                next.changedAt = at
            }
        case .cancel(let reason, let at):
            guard state != .cancelled else { return nil }
            next.state = .cancelled
            next.pausedBy = nil
            next.reason = reason
            next.changedAt = at
        case .setRate(let rate):
            guard state != .cancelled else { throw refusedAfterCancel("given a rate") }
            if let rate, !(rate.isFinite && rate > 0) {
                throw Refusal(code: .invalidRate, message: "the rate must be a number of notifications per second above 0, got \(rate)")
            }
            guard rate != ratePerSecond else { return nil }
            next.ratePerSecond = rate
        }
        next.version = version + 1
        return next
    }

    private func refusedAfterCancel(_ what: String) -> Refusal {
        Refusal(code: .cancelled, message: "the job was cancelled; it cannot be \(what)")
    }
}
