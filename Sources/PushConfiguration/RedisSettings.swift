/// Redis connection settings (`redis:`). Its `description` and mirror redact the password.
public struct RedisSettings: Sendable, Equatable {
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
    /// Connections in the pool (`pool-size`), ≥ 1; default 4.
    public var poolSize: Int

    /// Creates Redis settings; every parameter has the documented default.
    public init(
        host: String = "127.0.0.1", port: Int = 6379, username: String? = nil, password: String? = nil,
        passwordFile: String? = nil, database: Int = 0, poolSize: Int = 4
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.passwordFile = passwordFile
        self.database = database
        self.poolSize = poolSize
    }
}
