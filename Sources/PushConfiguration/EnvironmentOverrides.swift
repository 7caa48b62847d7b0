import Foundation
import Yams

/// Applies `PUSHFLEET__<SEG>__<SEG>…` environment variables to a configuration tree before it is
/// validated.
///
/// - Segments are separated by `__` and matched case-insensitively against the kebab-case keys,
///   with `_` standing for `-` (`PUSHFLEET__KAFKA__BOOTSTRAP_SERVERS` → `kafka.bootstrap-servers`).
/// - Under `kafka.properties` a segment's `_` stands for `.` (`…__PROPERTIES__SASL_MECHANISM` →
///   `sasl.mechanism`); an existing property is matched case-insensitively, a new one is lowercased.
/// - Under `apps` a segment names an app id as written in the file (case-insensitively, `_` matching
///   `-` or `_`); an app not in the file is created with the segment, lowercased, as its id.
/// - A value is a YAML plain scalar taken verbatim (no comments): `500` is an integer, `true` a
///   boolean, and `null`, `~` or an empty value remove the key. A value starting with `"` or `'` is
///   parsed as a quoted YAML scalar, which forces a string.
/// - Variables apply in name order, so a parent's removal comes before its children's settings.
/// - A variable naming an unknown key is an error whose key is the variable's name.
struct EnvironmentOverrides: Sendable {
    /// The prefix that marks an override variable.
    static let prefix = "PUSHFLEET__"

    /// The override variables, sorted by name.
    let variables: [(name: String, value: String)]

    /// Picks the `PUSHFLEET__…` variables out of `environment`; every other variable is ignored.
    init(environment: [String: String]) {
        variables =
            environment
            .filter { $0.key.hasPrefix(Self.prefix) }
            .map { (name: $0.key, value: $0.value) }
            .sorted { $0.name < $1.name }
    }

    /// Returns `root` with every override applied.
    func apply(to root: ConfigNode?) throws(ConfigurationError) -> ConfigNode? {
        var root = root
        for variable in variables {
            let segments = variable.name.dropFirst(Self.prefix.count).components(separatedBy: "__")
            guard segments.allSatisfy({ !$0.isEmpty }) else {
                throw ConfigurationError(
                    key: variable.name,
                    message: "malformed override name; expected PUSHFLEET__<SECTION>__<KEY>, segments separated by '__'")
            }
            let value = try Self.parseValue(variable.value, variable: variable.name)
            let origin = ConfigOrigin.environment(variable: variable.name)
            root = try Self.set(
                value, at: segments[...], in: root, schema: .root, path: "", variable: variable.name, origin: origin)
        }
        return root
    }

    /// Parses an override's value; `nil` for null (remove the key). Errors never quote the value.
    static func parseValue(_ raw: String, variable: String) throws(ConfigurationError) -> ConfigNode? {
        let origin = ConfigOrigin.environment(variable: variable)
        guard raw.first == "\"" || raw.first == "'" else {
            let kind = ConfigScalarKind(plain: raw)
            return kind == .null ? nil : .scalar(ConfigScalar(text: raw, kind: kind), origin: origin)
        }
        let node: Node?
        do {
            node = try Yams.compose(yaml: raw)
        } catch {
            throw ConfigurationError(key: variable, message: "the value is not a valid quoted YAML string")
        }
        guard case .scalar(let scalar)? = node else {
            throw ConfigurationError(key: variable, message: "the value is not a single quoted YAML string")
        }
        return .scalar(ConfigScalar(text: scalar.string, kind: .string), origin: origin)
    }

    /// Sets (or, for a `nil` value, removes) the key at `segments` below `node`, creating mappings on
    /// the way. Returns the new node; `nil` when nothing was there and nothing was set.
    static func set(
        _ value: ConfigNode?, at segments: ArraySlice<String>, in node: ConfigNode?, schema: ConfigurationSchema,
        path: String, variable: String, origin: ConfigOrigin
    ) throws(ConfigurationError) -> ConfigNode? {
        guard let segment = segments.first else { return value }
        var entries: [ConfigEntry]
        var nodeOrigin = origin
        switch node {
        case nil:
            entries = []
        case .mapping(let existing, let existingOrigin)?:
            entries = existing
            nodeOrigin = existingOrigin
        case let other? where other.isNull:
            entries = []
            nodeOrigin = other.origin
        case let other?:
            throw ConfigurationError(
                key: variable, message: "cannot set a key below '\(path)', which is \(other.article), not a mapping")
        }

        let key: String
        let childSchema: ConfigurationSchema
        let existingIndex: Int?
        let rest = segments.dropFirst()
        switch schema {
        case .value:
            throw ConfigurationError(key: variable, message: "unknown key: '\(path)' has no keys below it")
        case .section(let keys):
            let wanted = segment.lowercased().replacingOccurrences(of: "_", with: "-")
            guard let match = keys.first(where: { $0.key == wanted }) else {
                throw ConfigurationError(
                    key: variable,
                    message: "unknown key '\(ConfigurationSchema.join(path, wanted))'; expected one of: "
                        + keys.map { ConfigurationSchema.join(path, $0.key) }.joined(separator: ", "))
            }
            key = match.key
            childSchema = match.schema
            existingIndex = entries.firstIndex { $0.key == key }
        case .properties:
            guard rest.isEmpty else {
                throw ConfigurationError(
                    key: variable, message: "a key under '\(path)' is a single segment, with '_' for '.'")
            }
            let wanted = segment.lowercased().replacingOccurrences(of: "_", with: ".")
            existingIndex = entries.firstIndex { $0.key.lowercased().replacingOccurrences(of: "_", with: ".") == wanted }
            key = existingIndex.map { entries[$0].key } ?? wanted
            childSchema = .value
        case .apps(let appSchema):
            let wanted = segment.lowercased().replacingOccurrences(of: "-", with: "_")
            let matches = entries.indices.filter {
                entries[$0].key.lowercased().replacingOccurrences(of: "-", with: "_") == wanted
            }
            guard matches.count <= 1 else {
                throw ConfigurationError(
                    key: variable,
                    message: "ambiguous app id: matches "
                        + matches.map { "'\(entries[$0].key)'" }.joined(separator: " and "))
            }
            existingIndex = matches.first
            key = existingIndex.map { entries[$0].key } ?? segment.lowercased()
            guard ConfigurationSchema.isValidAppID(key) else {
                throw ConfigurationError(key: variable, message: "an app id must be 1–64 characters of A-Z a-z 0-9 . _ -")
            }
            childSchema = appSchema
        }

        let child = try set(
            value, at: rest, in: existingIndex.map { entries[$0].value }, schema: childSchema,
            path: ConfigurationSchema.join(path, key), variable: variable, origin: origin)
        switch (existingIndex, child) {
        case (let index?, let child?):
            entries[index].value = child
        case (let index?, nil):
            entries.remove(at: index)
        case (nil, let child?):
            entries.append(ConfigEntry(key: key, keyOrigin: origin, value: child))
        case (nil, nil):
            return node
        }
        return .mapping(entries, origin: nodeOrigin)
    }
}
