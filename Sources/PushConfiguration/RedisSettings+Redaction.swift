extension RedisSettings: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The placeholder printed instead of a password.
    static let redacted = "<redacted>"

    /// The settings with the password replaced by `<redacted>`.
    public var description: String {
        "RedisSettings(clusterNodes: \(clusterNodes), host: \(host), port: \(port), username: \(username ?? "nil"), password: "
            + (password == nil ? "nil" : Self.redacted)
            + ", passwordFile: \(passwordFile ?? "nil"), database: \(database), poolSize: \(poolSize), replicaAcknowledgements: \(replicaAcknowledgements), replicaAcknowledgementTimeout: \(replicaAcknowledgementTimeout))"
    }

    /// Same as ``description``: the password is redacted.
    public var debugDescription: String { description }

    /// A mirror whose `password` child is `<redacted>` (or `nil`), so `dump` never shows it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "clusterNodes": clusterNodes, "host": host, "port": port, "username": username as Any,
                "password": (password == nil ? nil : Self.redacted) as String? as Any,
                "passwordFile": passwordFile as Any, "database": database, "poolSize": poolSize,
                "replicaAcknowledgements": replicaAcknowledgements, "replicaAcknowledgementTimeout": replicaAcknowledgementTimeout,
            ], displayStyle: .struct)
    }
}
