/// Redis connection settings (`redis:`). Its `description` and mirror redact the password.
///
/// One server (`host`, `port`), or a Redis Cluster (`cluster-nodes`: some of its nodes, from
/// which the rest is learnt); the other settings apply to every node.
public struct RedisSettings: Sendable, Equatable {
    /// Seed nodes of a Redis Cluster, `host:port` each (`cluster-nodes`); default none: one
    /// server at ``host``:``port``. When set, ``host`` and ``port`` are not used and ``database``
    /// must be 0.
    public var clusterNodes: [String]
    /// Host name or address (`host`); default `"127.0.0.1"`.
    public var host: String
    /// TCP port (`port`), 1...65535; default 6379.
    public var port: Int
    /// ACL user name (`username`); default none.
    public var username: String?
    /// Password (`password`); default none. Mutually exclusive with `passwordFile`. Never printed.
    public var password: String?
    /// Absolute path of a file holding the password (`password-file`); default none. Read by
    /// ``resolvedPassword()``.
    public var passwordFile: String?
    /// Database index (`database`), ≥ 0; default 0.
    public var database: Int
    /// Connections in the pool (`pool-size`; per node in a cluster), ≥ 1; default 4.
    public var poolSize: Int
    /// In a cluster: replicas that must confirm a master's writes before they count as done
    /// (`replica-acknowledgements`, `WAIT`; for masters that have replicas), ≥ 0; default 1. A
    /// write so confirmed survives its master's failover; 0 never waits.
    public var replicaAcknowledgements: Int
    /// The longest wait for that confirmation (`replica-ack-timeout-ms`), ≥ 1 ms; default 500 ms.
    public var replicaAcknowledgementTimeout: Duration

    /// Creates Redis settings; every parameter has the documented default.
    public init(
        clusterNodes: [String] = [], host: String = "127.0.0.1", port: Int = 6379, username: String? = nil, password: String? = nil,
        passwordFile: String? = nil, database: Int = 0, poolSize: Int = 4, replicaAcknowledgements: Int = 1,
        replicaAcknowledgementTimeout: Duration = .milliseconds(500)
    ) {
        self.clusterNodes = clusterNodes
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.passwordFile = passwordFile
        self.database = database
        self.poolSize = poolSize
        self.replicaAcknowledgements = replicaAcknowledgements
        self.replicaAcknowledgementTimeout = replicaAcknowledgementTimeout
    }
}
