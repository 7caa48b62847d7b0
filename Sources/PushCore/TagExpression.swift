/// A tag audience: devices that carry every tag in ``all``, at least one tag in ``any`` (when it
/// is not empty) and no tag in ``none``.
///
/// At least one of ``all`` and ``any`` must be non-empty: a job never means "every device except
/// these" (that is a broadcast, and must say so).
public struct TagExpression: Hashable, Sendable {
    /// Tags a device must all carry.
    public var all: [String]
    /// Tags of which a device must carry at least one; ignored when empty.
    public var any: [String]
    /// Tags a device must not carry.
    public var none: [String]

    public init(all: [String] = [], any: [String] = [], none: [String] = []) {
        self.all = all
        self.any = any
        self.none = none
    }
}
