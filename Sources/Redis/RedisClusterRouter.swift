import FlowControl

/// Where a Redis Cluster client sends a command, and what it does when a node answers that the
/// slot is elsewhere or the cluster is not ready: a rule in a value type, without I/O. The
/// ``RedisClusterClient`` carries its decisions out.
///
/// - The slot map comes from the topology (``RedisClusterTopology``): each slot's master.
/// - `MOVED <slot> <host:port>`: the slot lives there now; the map is updated at once and the
///   command goes there; the client also refreshes the whole topology soon.
/// - `ASK <slot> <host:port>`: the slot is being migrated and this key is already there; the
///   command goes there once, after `ASKING`, and the map is left alone.
/// - `TRYAGAIN` (a multi-key command during a migration), `CLUSTERDOWN`, `LOADING`,
///   `MASTERDOWN`: wait and try again, with backoff; after `CLUSTERDOWN` or `MASTERDOWN` the
///   topology is read again (a failover may be under way).
/// - At most ``maxRedirections`` redirections and retries per command: past them, the node's
///   answer is the command's answer.
public struct RedisClusterRouter: Sendable {
    /// What a node's error answer says to a cluster client.
    public enum Redirection: Hashable, Sendable {
        case moved(slot: RedisHashSlot, to: RedisClusterTopology.Address)
        case ask(slot: RedisHashSlot, to: RedisClusterTopology.Address)
        /// `TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, `MASTERDOWN`: the first word.
        case notReady(String)

        /// Reads an error answer; `nil` for errors that are not about the cluster.
        public init?(errorMessage message: String) {
            let words = message.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
            guard let first = words.first else { return nil }
            switch first {
            case "MOVED", "ASK":
                guard words.count >= 3, let number = Int(words[1]), let slot = RedisHashSlot(rawValue: number),
                    let address = RedisClusterTopology.Address(words[2])
                else { return nil }
                self = first == "MOVED" ? .moved(slot: slot, to: address) : .ask(slot: slot, to: address)
            case "TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN":
                self = .notReady(String(first))
            default:
                return nil
            }
        }
    }

    /// What to do with a command after a node's answer or failure.
    public enum Decision: Hashable, Sendable {
        /// Send it to this node (after `ASKING` when `asking`).
        case send(to: RedisClusterTopology.Address, asking: Bool)
        /// Wait this long, read the topology again when `refresh`, then route it again.
        case retry(after: Duration, refresh: Bool)
        /// Give up: the last answer (or failure) is the command's.
        case giveUp
    }

    /// Redirections and retries one command may take.
    public var maxRedirections: Int
    /// The wait before the first retry of a cluster that is not ready; it doubles per retry.
    public var retryBase: Duration
    /// The longest wait between retries.
    public var retryMax: Duration

    /// The master of each slot: an index into ``nodes``, or -1.
    private var owners: [Int16]
    /// The nodes the map names.
    public private(set) var nodes: [RedisClusterTopology.Address]

    /// A router that knows no slot yet.
    public init(maxRedirections: Int = 16, retryBase: Duration = .milliseconds(25), retryMax: Duration = .seconds(1)) {
        self.maxRedirections = maxRedirections
        self.retryBase = retryBase
        self.retryMax = retryMax
        owners = Array(repeating: -1, count: RedisHashSlot.count)
        nodes = []
    }

    /// Takes every slot's master from `topology` (slots it does not assign keep their owner).
    public mutating func update(_ topology: RedisClusterTopology) {
        for shard in topology.shards {
            guard let master = shard.master else { continue }
            let index = self.index(of: master.address)
            for range in shard.slots {
                for slot in range {
                    owners[slot] = index
                }
            }
        }
    }

    /// The master of `slot`, if known.
    public func node(for slot: RedisHashSlot) -> RedisClusterTopology.Address? {
        nodeIndex(for: slot).map { nodes[$0] }
    }

    /// The index in ``nodes`` of the master of `slot`, if known.
    public func nodeIndex(for slot: RedisHashSlot) -> Int? {
        let index = owners[Int(slot.rawValue)]
        return index < 0 ? nil : Int(index)
    }

    /// How many slots have a known master.
    public var knownSlots: Int { owners.lazy.filter { $0 >= 0 }.count }

    /// The decision after the `attempt`-th answer (1-based) to a command was `redirection`;
    /// updates the map for `MOVED`.
    public mutating func decide(after redirection: Redirection, attempt: Int) -> Decision {
        guard attempt <= maxRedirections else { return .giveUp }
        switch redirection {
        case .moved(let slot, let address):
            owners[Int(slot.rawValue)] = index(of: address)
            return .send(to: address, asking: false)
        case .ask(_, let address):
            return .send(to: address, asking: true)
        case .notReady(let word):
            return .retry(after: delay(attempt: attempt), refresh: word == "CLUSTERDOWN" || word == "MASTERDOWN")
        }
    }

    /// The decision after the `attempt`-th try of a command could not reach its node (no
    /// connection: the command was not sent): read the topology again (the node may have failed
    /// over) and route it again.
    public func decideAfterUnreachableNode(attempt: Int) -> Decision {
        guard attempt <= maxRedirections else { return .giveUp }
        return .retry(after: delay(attempt: attempt), refresh: true)
    }

    private func delay(attempt: Int) -> Duration {
        ExponentialBackoff(base: retryBase, maximum: max(retryMax, retryBase)).delay(attempt: attempt)
    }

    private mutating func index(of address: RedisClusterTopology.Address) -> Int16 {
        if let index = nodes.firstIndex(of: address) { return Int16(index) }
        nodes.append(address)
        return Int16(nodes.count - 1)
    }
}
