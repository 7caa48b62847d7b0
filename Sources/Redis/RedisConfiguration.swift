/// How to reach one Redis server and how to behave when it misbehaves.
public struct RedisConfiguration: Sendable {
    /// Host name or IP address. Default `127.0.0.1`.
    public var host: String
    /// TCP port. Default `6379`.
    public var port: Int
    /// ACL user name for `AUTH username password`; `nil` (the default) authenticates as the
    /// `default` user with `AUTH password`.
    public var username: String?
    /// Password sent with `AUTH` after connecting; `nil` (the default) skips `AUTH`.
    public var password: String?
    /// Database selected with `SELECT` after connecting. Default `0` (no `SELECT` sent).
    public var database: Int
    /// Name set with `CLIENT SETNAME` so that `CLIENT LIST` shows who is connected; `nil` (the
    /// default) leaves it unset. Must not contain spaces.
    public var clientName: String?
    /// Upper bound for establishing a TCP connection. Default 5 seconds.
    public var connectTimeout: Duration
    /// Upper bound for each wait on the socket while sending a command or reading its reply;
    /// `nil` waits forever. Default 5 seconds. Blocking commands (`BLPOP key 10`) need a larger
    /// value than the time they block.
    public var commandTimeout: Duration?
    /// How a broken connection is re-established. Default: 5 attempts, 50 ms doubling to 2 s.
    public var reconnect: Reconnect
    /// Maximum number of connections a ``RedisClient`` opens; callers beyond it wait. Default 4.
    public var poolSize: Int

    /// Creates a configuration; every argument has the documented default.
    public init(
        host: String = "127.0.0.1",
        port: Int = 6379,
        username: String? = nil,
        password: String? = nil,
        database: Int = 0,
        clientName: String? = nil,
        connectTimeout: Duration = .seconds(5),
        commandTimeout: Duration? = .seconds(5),
        reconnect: Reconnect = Reconnect(),
        poolSize: Int = 4
    ) {
        precondition(poolSize > 0, "poolSize must be positive")
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.clientName = clientName
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.reconnect = reconnect
        self.poolSize = poolSize
    }

    /// `host:port`, as error messages and logs name the server.
    public var endpoint: String {
        "\(host):\(port)"
    }
}
