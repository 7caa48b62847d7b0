import Foundation

extension AppSettings {
    /// Every API key of the app: ``apiKeys`` and those of ``apiKeysFile`` (one ``APIKeyGrant``
    /// per line; blank lines and lines starting with `#` are skipped). Read anew on each call,
    /// so the API can pick up a rotated file without a restart.
    ///
    /// - Throws: A ``ConfigurationError`` keyed `apps.<id>.api-keys-file` naming the line when the
    ///   file cannot be read or a line is not a digest (the line itself is never echoed).
    public func allAPIKeys() throws(ConfigurationError) -> [APIKeyGrant] {
        guard let apiKeysFile else { return apiKeys }
        let key = "apps.\(id).api-keys-file"
        let text = try SecretFile.read(apiKeysFile, key: key)
        var digests = apiKeys
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let grant = APIKeyGrant(trimmed) else {
                throw ConfigurationError(key: key, message: "line \(index + 1) of '\(apiKeysFile)': \(APIKeyGrant.expectedForm)")
            }
            digests.append(grant)
        }
        return digests
    }
}
