/// Device-token registry settings (`registry:`).
public struct RegistrySettings: Sendable, Equatable {
    /// Number of registry shards (`shards`), 1...1024; default 16.
    public var shards: Int

    /// Creates registry settings; `shards` defaults to 16.
    public init(shards: Int = 16) {
        self.shards = shards
    }
}
