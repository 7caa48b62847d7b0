extension AppSettings {
    /// The PKCS#12 passphrase: the contents of `passphrase-file` with one trailing newline removed,
    /// or `nil` when the app does not use PKCS#12 or has no passphrase file.
    ///
    /// - Throws: A ``ConfigurationError`` keyed `apps.<id>.auth.pkcs12.passphrase-file` when the file
    ///   cannot be read or is empty. The error never contains the file's contents.
    public func resolvedPassphrase() throws(ConfigurationError) -> String? {
        guard case let .pkcs12(_, passphraseFile?) = auth else { return nil }
        return try SecretFile.read(passphraseFile, key: "apps.\(id).auth.pkcs12.passphrase-file")
    }
}
