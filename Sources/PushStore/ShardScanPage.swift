import APNsCore

/// One round of an `SSCAN`: some tokens and the cursor to continue from.
///
/// Follow ``cursor`` until ``isComplete``. As with any `SSCAN`, every token present for the whole
/// scan is returned at least once; a token bound or unbound during the scan may or may not be,
/// and a set that is resized during the scan may return a token twice.
public struct ShardScanPage: Hashable, Sendable {
    /// The cursor for the next call; `0` when the scan is complete.
    public var cursor: UInt64
    /// The tokens of this round (possibly none, even when the scan is not complete).
    public var tokens: [DeviceToken]

    public init(cursor: UInt64, tokens: [DeviceToken]) {
        self.cursor = cursor
        self.tokens = tokens
    }

    /// Whether the scan has gone all the way round.
    public var isComplete: Bool { cursor == 0 }
}
