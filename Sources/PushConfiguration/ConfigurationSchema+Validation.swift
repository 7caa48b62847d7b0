import Foundation

extension ConfigurationSchema {
    /// Rejects unknown keys, invalid app ids and values of the wrong container type, in document order.
    ///
    /// - Parameters:
    ///   - node: The node at `path`; `nil` or null means "not set" and is always accepted here.
    ///   - path: The dotted key path of `node` (empty for the whole file).
    func validate(_ node: ConfigNode?, path: String) throws(ConfigurationError) {
        guard let node, !node.isNull else { return }
        switch self {
        case .value:
            return
        case .section(let keys):
            let entries = try Self.entries(of: node, path: path, expected: "a mapping")
            for entry in entries {
                guard let child = keys.first(where: { $0.key == entry.key }) else {
                    throw ConfigurationError(
                        key: Self.join(path, entry.key),
                        message: Self.unknownKeyMessage(entry.key, known: keys.map(\.key)),
                        origin: entry.keyOrigin)
                }
                try child.schema.validate(entry.value, path: Self.join(path, entry.key))
            }
        case .properties:
            let entries = try Self.entries(of: node, path: path, expected: "a mapping of property names to values")
            for entry in entries {
                let keyPath = Self.join(path, entry.key)
                if entry.key.isEmpty {
                    throw ConfigurationError(key: keyPath, message: "property names must not be empty", origin: entry.keyOrigin)
                }
                if case .scalar = entry.value { continue }
                throw ConfigurationError(
                    key: keyPath, message: "expected a string, number or boolean, found \(entry.value.article)",
                    origin: entry.value.origin)
            }
        case .apps(let appSchema):
            let entries = try Self.entries(of: node, path: path, expected: "a mapping keyed by app id")
            for entry in entries {
                let keyPath = Self.join(path, entry.key)
                guard Self.isValidAppID(entry.key) else {
                    throw ConfigurationError(
                        key: keyPath, message: "an app id must be 1–64 characters of A-Z a-z 0-9 . _ -",
                        origin: entry.keyOrigin)
                }
                try appSchema.validate(entry.value, path: keyPath)
            }
        }
    }

    /// The entries of a mapping node, or an error naming `path` when it is another kind of node.
    static func entries(of node: ConfigNode, path: String, expected: String) throws(ConfigurationError) -> [ConfigEntry] {
        guard case .mapping(let entries, _) = node else {
            throw ConfigurationError(
                key: path.isEmpty ? ConfigurationError.fileKey : path,
                message: "expected \(expected), found \(node.article)", origin: node.origin)
        }
        return entries
    }

    /// "unknown key 'x'", with a suggestion when a known key is a likely typo, and the known keys.
    static func unknownKeyMessage(_ key: String, known: [String]) -> String {
        var message = "unknown key '\(key)'"
        let normalized = key.lowercased().replacingOccurrences(of: "_", with: "-")
        let suggestion =
            known
            .map { (key: $0, distance: editDistance(normalized, $0)) }
            .filter { $0.distance <= max(2, $0.key.count / 4) }
            .min { $0.distance < $1.distance }
        if let suggestion {
            message += " (did you mean '\(suggestion.key)'?)"
        }
        return message + "; expected one of: " + known.joined(separator: ", ")
    }

    /// The Levenshtein distance between two strings, over characters.
    static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs)
        let b = Array(rhs)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
