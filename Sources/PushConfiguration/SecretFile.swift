import Foundation

/// Reads small secret files (passwords, passphrases, keys, certificates) without ever echoing
/// their contents.
enum SecretFile {
    /// The bytes of the file at `path` (a binary secret such as a PKCS#12 bundle).
    ///
    /// - Throws: A ``ConfigurationError`` keyed `key` when the file cannot be read or is empty.
    static func bytes(_ path: String, key: String) throws(ConfigurationError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(key: key, message: "cannot read file '\(path)'")
        }
        guard !data.isEmpty else {
            throw ConfigurationError(key: key, message: "file '\(path)' is empty")
        }
        return Array(data)
    }

    /// The contents of the file at `path` with one trailing newline (`\n` or `\r\n`) removed.
    ///
    /// - Throws: A ``ConfigurationError`` keyed `key` when the file cannot be read, is not UTF-8,
    ///   or is empty.
    static func read(_ path: String, key: String) throws(ConfigurationError) -> String {
        guard let contents = String(bytes: try bytes(path, key: key), encoding: .utf8) else {
            throw ConfigurationError(key: key, message: "file '\(path)' is not UTF-8 text")
        }
        // Work on scalars: "\r\n" is a single Character.
        var scalars = contents.unicodeScalars[...]
        if scalars.last == "\n" {
            scalars.removeLast()
            if scalars.last == "\r" { scalars.removeLast() }
        }
        let text = String(scalars)
        guard !text.isEmpty else {
            throw ConfigurationError(key: key, message: "file '\(path)' is empty")
        }
        return text
    }
}
