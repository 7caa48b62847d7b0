/// A `Duration` as the whole numbers the C libraries, Redis scripts and NIO timers take. Each
/// saturates instead of overflowing. (As seconds, `duration / .seconds(1)` is the standard
/// library's own.)
extension Duration {
    /// The duration in whole milliseconds, rounded down (negative durations towards zero).
    package var wholeMilliseconds: Int64 {
        whole(unitsPerSecond: 1_000)
    }

    /// The duration in milliseconds, rounded up: a wait of this many milliseconds is at least
    /// the duration.
    package var roundedUpMilliseconds: Int64 {
        let whole = wholeMilliseconds
        let remainder = components.attoseconds % 1_000_000_000_000_000
        return remainder > 0 && whole < .max ? whole + 1 : whole
    }

    /// The duration in whole nanoseconds, rounded towards zero.
    package var nanoseconds: Int64 {
        whole(unitsPerSecond: 1_000_000_000)
    }

    /// Whole units of `1 / unitsPerSecond` s (a divisor of 10¹⁸), rounded towards zero, saturating.
    private func whole(unitsPerSecond: Int64) -> Int64 {
        let parts = components
        let saturated: Int64 = parts.seconds < 0 ? .min : .max
        let (scaled, overflow) = parts.seconds.multipliedReportingOverflow(by: unitsPerSecond)
        if overflow { return saturated }
        let (total, overflowAdding) = scaled.addingReportingOverflow(parts.attoseconds / (1_000_000_000_000_000_000 / unitsPerSecond))
        return overflowAdding ? saturated : total
    }
}
