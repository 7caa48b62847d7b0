import Logging
import PushStore

/// Ends resend-buffer entries with their final outcome and counts each outcome once, even when
/// the process dies between the resend buffer's slot and the job's: the completion's script
/// removes the entries and writes what it counted (``ResendTally``) in the resend slot, then the
/// tally is applied to the job's counters (once per tally id) and forgotten. A tally left
/// behind by a completer that died is applied by a worker's resend drainer
/// (``recoverTallies(app:)``) once it is ``recoveryAge`` old. Every completion of an entry goes
/// through here: a worker's resends and online-only fallbacks, and a gateway's acked sends; the
/// resends the buffer gives up on are counted the same way (their tallies written by
/// ``ResendBuffer/schedule(app:_:countingGivenUp:)``, applied by ``count(_:app:)``).
package struct ResendCompletion: Sendable {
    let resend: ResendBuffer
    let jobs: JobStore
    let logger: Logger

    /// How old a tally must be before a drainer applies it for its completer: far longer than a
    /// completer takes between its two steps, so that the drainer rarely applies one the
    /// completer is about to (which would still count once).
    package static let recoveryAge = Duration.seconds(30)

    package init(resend: ResendBuffer, jobs: JobStore, logger: Logger) {
        self.resend = resend
        self.jobs = jobs
        self.logger = logger
    }

    /// Completes `entries` of job `jobID`; entry `i` counts `counting[i]` if it was still in the
    /// buffer (another completion did not end it first).
    ///
    /// - Returns: for each entry, whether this completion ended it.
    package func complete(app: String, jobID: String, _ entries: [ResendEntry], counting: [[JobCounter]]) async throws -> [Bool] {
        guard !entries.isEmpty else { return [] }
        let resend = self.resend
        // Run again after a lost reply, the script finds the entries gone and counts nothing; the
        // first run's tally is then applied by a drainer.
        let completion = try await Retrying.run("completing \(entries.count) resend-buffer entr(ies) of job \(jobID)", logger: logger) {
            try await resend.complete(app: app, jobID: jobID, entries, counting: counting)
        }
        if let tally = completion.tally { try await count(tally, app: app) }
        return completion.removed
    }

    /// Applies the tallies of `app` that their completers left behind; answers how many.
    package func recoverTallies(app: String) async throws -> Int {
        let pending = try await resend.pendingTallies(app: app, writtenBefore: Self.recoveryAge)
        for tally in pending {
            logger.notice(
                "counting a resend tally its completer left behind", metadata: ["app": "\(app)", "job": "\(tally.jobID)", "tally": "\(tally.id)"])
            try await count(tally, app: app)
        }
        return pending.count
    }

    /// Applies `tally` to its job (once per tally id, whoever applies it) and forgets it.
    package func count(_ tally: ResendTally, app: String) async throws {
        let (resend, jobs) = (self.resend, self.jobs)
        try await Retrying.run("counting the outcomes of job \(tally.jobID)'s resend-buffer entries", logger: logger) {
            try await jobs.apply(tally)
        }
        try await Retrying.run("forgetting resend tally \(tally.id)", logger: logger) {
            try await resend.forget(tally, app: app)
        }
    }
}
