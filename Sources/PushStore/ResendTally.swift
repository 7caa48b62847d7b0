/// What completing some of a job's resend-buffer entries counted: one counter per final outcome
/// of each entry the completion removed (``ResendBuffer/complete(app:jobID:_:counting:)``).
///
/// The entries live in the app's resend slot and the job's counters in the job's slot, and no
/// script reaches both on a Redis Cluster. So the completion writes its tally in the resend slot,
/// in the same script that removes the entries, and the completer then applies it to the job's
/// counters (``JobStore/apply(_:)``, once per tally id whoever applies it) and forgets it. A
/// completer that dies in between leaves the tally, and a worker's resend drainer applies it
/// later: each final outcome is counted once.
///
/// Stored as a hash field of the resend slot: the tally's id → the job id, then `name=count`
/// per counter, one per line (job ids and counter names hold no control characters).
package struct ResendTally: Equatable, Sendable {
    /// Unique per completion.
    package var id: String
    package var jobID: String
    package var counters: [JobCounter: Int]

    package init(id: String, jobID: String, counters: [JobCounter: Int]) {
        self.id = id
        self.jobID = jobID
        self.counters = counters
    }

    /// The tally stored under `id`, or `nil` for a value PushFleet did not write.
    package init?(id: String, value: String) {
        let lines = value.split(separator: "\n", omittingEmptySubsequences: false)
        guard let jobID = lines.first, !jobID.isEmpty, lines.count > 1 else { return nil }
        var counters: [JobCounter: Int] = [:]
        for line in lines.dropFirst() {
            guard let equals = line.lastIndex(of: "="), let counter = JobCounter(name: String(line[..<equals])),
                let count = Int(line[line.index(after: equals)...]), count > 0
            else { return nil }
            counters[counter, default: 0] += count
        }
        self.init(id: id, jobID: String(jobID), counters: counters)
    }

    /// The stored value (the complete script writes the same form).
    package var value: String {
        ([jobID] + counters.map { "\($0.key.name)=\($0.value)" }.sorted()).joined(separator: "\n")
    }
}

/// What ``ResendBuffer/schedule(app:_:countingGivenUp:)`` answers.
package struct ResendScheduling: Equatable, Sendable {
    /// The failures given up on (too many attempts, or too old), in the order given: none was
    /// added, and an entry of theirs was removed.
    package var expired: [ResendEntry]
    /// Per job, `dead-lettered` once for each counted given-up entry the script removed; the
    /// caller applies each to its job and forgets it.
    package var tallies: [ResendTally]

    package init(expired: [ResendEntry] = [], tallies: [ResendTally] = []) {
        self.expired = expired
        self.tallies = tallies
    }
}
