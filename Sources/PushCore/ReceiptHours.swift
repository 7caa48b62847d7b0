/// When a device reads its notifications: its receipts (`delivered`, `opened`) counted by the
/// hour of the day (UTC) they arrived in, one byte per hour, as the registry keeps them. A
/// count that would pass 255 halves all 24 first, so old habits fade as new receipts come.
///
/// The hours are UTC, not the device's local time: the count is one write per receipt with no
/// time zone to look up, and an hour of UTC is what a send is scheduled at. A device whose zone
/// moves its clocks (daylight saving time) reads an hour earlier or later in UTC for a few weeks,
/// until its newer receipts outweigh the older ones.
public struct ReceiptHours: Hashable, Sendable {
    /// The bytes of the stored form: one count per UTC hour, 0 to 23.
    public static let byteCount = 24
    /// The fewest receipts for a device's own best hour; with fewer, its tag's or app's is used.
    public static let minimumReceipts = 3

    /// The receipts of each UTC hour, 0 to 23.
    public private(set) var counts: [Int]

    /// The stored form; anything other than 24 bytes (nothing stored) reads as no receipts.
    public init(bytes: [UInt8]) {
        counts = bytes.count == Self.byteCount ? bytes.map(Int.init) : Array(repeating: 0, count: Self.byteCount)
    }

    /// The receipts counted, over every hour.
    public var total: Int { counts.reduce(0, +) }

    /// The UTC hour with the most receipts (the earliest of equal ones), once the device has
    /// ``minimumReceipts``; `nil` before.
    public var bestHour: Int? {
        guard total >= Self.minimumReceipts, let most = counts.max() else { return nil }
        return counts.firstIndex(of: most)
    }
}
