import Foundation

extension RedisSettings {
    /// The password to authenticate with: ``password`` if set, else the contents of ``passwordFile``
    /// with one trailing newline removed, else `nil`.
    ///
    /// - Throws: A ``ConfigurationError`` keyed `redis.password-file` when the file cannot be read or
    ///   is empty. The error never contains the file's contents.
    public func resolvedPassword() throws(ConfigurationError) -> String? {
        if let password { return password }
        guard let passwordFile else { return nil }
        return try SecretFile.read(passwordFile, key: "redis.password-file")
    }
}
