/// When the Redis event loop's thread wakes on its own, and when another thread must wake it:
/// the loop sleeps in `epoll_wait` until a socket is ready or the earliest deadline of its
/// exchanges, and an exchange registered while it sleeps needs a wake-up only if its deadline
/// comes before the planned end of that sleep. Most deadlines are the command timeout from
/// now, later than every one before, so most registrations cost no wake-up.
///
/// Pure: the loop keeps it under its lock and carries out what it answers.
struct RedisWakePlan {
    /// The longest sleep: with nothing due, the loop still wakes this often to plan again.
    static let idleSleep: Duration = .seconds(1)

    /// The instant the loop's current (or next) sleep ends; `nil` before the loop first plans,
    /// when it will see every registration made by then.
    private(set) var plannedWake: ContinuousClock.Instant?

    /// Whether an exchange registered now with `deadline` needs the sleeping loop woken.
    func needsWake(for deadline: ContinuousClock.Instant?) -> Bool {
        guard let deadline, let plannedWake else { return false }
        return deadline < plannedWake
    }

    /// Plans the next sleep from `now` and the earliest deadline of the registered exchanges:
    /// returns its length for `epoll_wait` in whole milliseconds, rounded up so that the loop
    /// never wakes just before a deadline and sleeps again for nothing (0 when it is due).
    mutating func planSleep(now: ContinuousClock.Instant, earliestDeadline: ContinuousClock.Instant?) -> Int32 {
        let wake = min(earliestDeadline ?? now + Self.idleSleep, now + Self.idleSleep)
        plannedWake = wake
        guard wake > now else { return 0 }
        let (seconds, attoseconds) = (wake - now).components
        let milliseconds = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }
}
