extension Duration {
    /// The duration in whole milliseconds, rounded down (negative durations towards zero);
    /// saturates instead of overflowing.
    var wholeMilliseconds: Int64 {
        let parts = components
        let (scaled, overflow) = parts.seconds.multipliedReportingOverflow(by: 1_000)
        if overflow {
            return parts.seconds < 0 ? .min : .max
        }
        let (total, overflowAdding) = scaled.addingReportingOverflow(parts.attoseconds / 1_000_000_000_000_000)
        return overflowAdding ? .max : total
    }
}

extension Duration {
    /// The duration in milliseconds, rounded up: a wait of this many milliseconds is at least
    /// the duration. Saturates instead of overflowing.
    var roundedUpMilliseconds: Int64 {
        let whole = wholeMilliseconds
        let remainder = components.attoseconds % 1_000_000_000_000_000
        return remainder > 0 && whole < .max ? whole + 1 : whole
    }
}
