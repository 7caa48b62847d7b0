/// How a ``RedisClusterClient`` finds a cluster and talks to its nodes.
public struct RedisClusterConfiguration: Sendable {
    /// Nodes to ask for the topology first (any of them will do; more than one in case one is
    /// down). Default none: at least one is needed.
    public var seeds: [RedisClusterTopology.Address]
    /// What every node's connections use (its `host` and `port` are replaced by each node's):
    /// AUTH (password or ACL user, the same on every node), timeouts, reconnects, and the pool
    /// size per node. Cluster nodes have one database: `database` must stay 0.
    public var node: RedisConfiguration
    /// The topology is read again when a command finds it older than this (and at once after a
    /// `MOVED`, `CLUSTERDOWN` or `MASTERDOWN`, or a node that cannot be reached). Default 30 s.
    public var refreshInterval: Duration
    /// Redirections (`MOVED`, `ASK`) and retries (`TRYAGAIN`, `CLUSTERDOWN`, `LOADING`,
    /// `MASTERDOWN`, an unreachable node) per command before its last answer is returned.
    /// Default 16 (with backoff from 25 ms to 1 s, about 12 s in all).
    public var maxRedirections: Int
    /// Replicas that must acknowledge a master's writes before a command, pipeline or script
    /// batch returns (`WAIT`, in the same round trip), for masters that have replicas: a write
    /// acknowledged this way survives its master's failover. Default 1; 0 never waits.
    public var replicaAcknowledgements: Int
    /// The longest wait for those acknowledgements; past it the answer is returned anyway (a
    /// replica that lags does not stop the fleet). Default 500 ms.
    public var replicaAcknowledgementTimeout: Duration

    /// Creates a configuration; every argument but the seeds has the documented default.
    public init(
        seeds: [RedisClusterTopology.Address],
        node: RedisConfiguration = RedisConfiguration(),
        refreshInterval: Duration = .seconds(30),
        maxRedirections: Int = 16,
        replicaAcknowledgements: Int = 1,
        replicaAcknowledgementTimeout: Duration = .milliseconds(500)
    ) {
        precondition(!seeds.isEmpty, "a cluster needs at least one seed node")
        precondition(node.database == 0, "Redis Cluster has only database 0")
        self.seeds = seeds
        self.node = node
        self.refreshInterval = refreshInterval
        self.maxRedirections = maxRedirections
        self.replicaAcknowledgements = replicaAcknowledgements
        self.replicaAcknowledgementTimeout = replicaAcknowledgementTimeout
    }

    /// The configuration of one node's pool.
    func configuration(for address: RedisClusterTopology.Address) -> RedisConfiguration {
        var configuration = node
        configuration.host = address.host
        configuration.port = address.port
        return configuration
    }
}
