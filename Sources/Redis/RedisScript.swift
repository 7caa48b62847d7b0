import Synchronization

/// A Lua script run with `EVALSHA`. Declare each script once (a `static let`) and share it: the
/// SHA-1 that `SCRIPT LOAD` returns the first time is remembered here, and later calls send only
/// the hash. When a server has lost its script cache (`SCRIPT FLUSH`, restart, failover) the
/// `NOSCRIPT` reply triggers one `SCRIPT LOAD` and a retry.
public final class RedisScript: Sendable {
    /// The Lua source.
    public let source: String
    private let loadedSHA1: Mutex<String?>

    /// Creates a script from its Lua source.
    public init(_ source: String) {
        self.source = source
        self.loadedSHA1 = Mutex(nil)
    }

    /// The SHA-1 of ``source`` as reported by `SCRIPT LOAD`; `nil` until the script first ran.
    public var sha1: String? {
        loadedSHA1.withLock { $0 }
    }

    func remember(sha1: String) {
        loadedSHA1.withLock { $0 = sha1 }
    }
}
