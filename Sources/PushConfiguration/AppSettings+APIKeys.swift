import Foundation

extension AppSettings {
    /// Every API key digest of the app: ``apiKeys`` and those of ``apiKeysFile`` (one
    /// `sha256:<hex>` per line; blank lines and lines starting with `#` are skipped).
    ///
    /// - Throws: A ``ConfigurationError`` keyed `apps.<id>.api-keys-file` naming the line when the
    ///   file cannot be read or a line is not a digest (the line itself is never echoed).
    public func allAPIKeys() throws(ConfigurationError) -> [APIKeyDigest] {
        guard let apiKeysFile else { return apiKeys }
        let key = "apps.\(id).api-keys-file"
        let text = try SecretFile.read(apiKeysFile, key: key)
        var digests = apiKeys
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let digest = APIKeyDigest(trimmed) else {
                throw ConfigurationError(
                    key: key,
                    message: "line \(index + 1) of '\(apiKeysFile)' is not 'sha256:' and the 64 hex digits of a key's SHA-256 digest")
            }
            digests.append(digest)
        }
        return digests
    }
}
