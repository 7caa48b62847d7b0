import APNsCore

/// The Redis keys of one app's resend buffer (see `schemas/redis.md`): both in the slot
/// `{<app>:resend}`, so a script schedules, claims and completes entries atomically.
struct ResendKeyspace: Sendable {
    /// `pf:{<app>:resend}:`
    let base: String

    init(app: String) {
        base = "pf:{\(app):resend}:"
    }

    /// ZSET entry member → due time (ms since 1970).
    var due: String { base + "due" }
    /// HASH entry member → `<attempts> <firstFailedAt> <reason>`.
    var entries: String { base + "entries" }
    /// ZSET tally id → when it was written (ms since 1970): completions whose counts may not be
    /// applied to their job yet (``ResendTally``).
    var tallies: String { base + "tallies" }
    /// HASH tally id → the tally (``ResendTally/value``).
    var tallyValues: String { base + "tally-values" }

    /// The member of an entry: `<jobID> <tokenhex>`.
    static func member(jobID: String, token: DeviceToken) -> String {
        jobID + " " + token.hex
    }

    /// The job id and token of a member; `nil` if it is not one.
    static func parseMember(_ member: String) -> (jobID: String, token: DeviceToken)? {
        guard let space = member.lastIndex(of: " ") else { return nil }
        let jobID = String(member[..<space])
        guard !jobID.isEmpty, let token = try? DeviceToken(hex: String(member[member.index(after: space)...])) else {
            return nil
        }
        return (jobID, token)
    }

    /// The value of an entry's hash field.
    static func value(attempts: Int, firstFailedAt: Int64, reason: String) -> String {
        "\(attempts) \(firstFailedAt) \(reason)"
    }

    /// The attempts, first failure time and reason of a hash value; `nil` if it is not one.
    static func parseValue(_ value: String) -> (attempts: Int, firstFailedAt: Int64, reason: String)? {
        let parts = value.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let attempts = Int(parts[0]), let firstFailedAt = Int64(parts[1]) else {
            return nil
        }
        return (attempts, firstFailedAt, String(parts[2]))
    }
}
