import APNsCore
import Foundation

extension ConfigurationParser {
    /// `apps:`: a mapping keyed by app id, with at least one app.
    func apps(_ file: ConfigSection, key: String) throws(ConfigurationError) -> [String: AppSettings] {
        let section = try file.section(key)
        guard !section.entries.isEmpty else {
            throw file.error(key, "at least one app is required")
        }
        var apps: [String: AppSettings] = [:]
        for entry in section.entries {
            apps[entry.key] = try app(id: entry.key, ConfigSection(entry.value, path: section.keyPath(entry.key), fallback: entry.keyOrigin))
        }
        return apps
    }

    /// `apps.<id>:`.
    func app(id: String, _ section: ConfigSection) throws(ConfigurationError) -> AppSettings {
        let bundleID = try section.requiredString("bundle-id")
        guard !bundleID.contains(where: { $0.isWhitespace }) else {
            throw section.error("bundle-id", "must not contain whitespace")
        }
        let ratePerSecond = try section.number("rate-per-second", minimum: 0) ?? 0
        var extraTopics: [String] = []
        if section.has("extra-topics") {
            for item in try stringList(section, key: "extra-topics", of: "bundle ids") {
                guard !item.text.isEmpty, !item.text.contains(where: { $0.isWhitespace }) else {
                    throw ConfigurationError(
                        key: section.keyPath("extra-topics"), message: "'\(item.text)' is not a bundle id", origin: item.origin)
                }
                extraTopics.append(item.text)
            }
        }
        let environments = try environments(section, key: "environments")
        let (auth, environmentAuth) = try credentials(section, key: "auth", environments: environments)
        var transport = AppTransport.http2
        if let name = try section.string("transport") {
            guard let chosen = AppTransport(rawValue: name) else {
                throw section.error("transport", "must be http2 or binary, got '\(name)'")
            }
            transport = chosen
        }
        if transport == .binary {
            for environment in environments {
                if case .token = environmentAuth[environment] ?? auth {
                    throw section.error(
                        "transport",
                        "binary needs a client certificate (auth.certificate or auth.pkcs12) for \(environment.rawValue): the binary interface takes no signing key"
                    )
                }
            }
        }
        var settings = AppSettings(
            id: id,
            bundleID: bundleID,
            extraTopics: extraTopics,
            environments: environments,
            auth: auth,
            environmentAuth: environmentAuth,
            ratePerSecond: ratePerSecond,
            burst: try section.integer("burst", minimum: 1),
            sleepAfter: try section.integer("sleep-after", default: 0, minimum: 0),
            sleepMilliseconds: try section.integer("sleep-ms", default: 0, minimum: 0),
            connectionsPerPool: try section.integer("connections-per-pool", minimum: 1),
            apiKeys: try apiKeys(section, key: "api-keys"),
            apiKeysFile: try section.path("api-keys-file", baseDirectory: baseDirectory))
        settings.transport = transport
        settings.timeZone = try timeZone(section, key: "time-zone")
        return settings
    }

    /// `apps.<id>.time-zone`: an IANA time zone name the machine's time zone database knows;
    /// default `UTC`.
    func timeZone(_ section: ConfigSection, key: String) throws(ConfigurationError) -> String {
        guard let name = try section.string(key) else { return "UTC" }
        if let problem = TimeZoneName.problem(name) {
            throw section.error(key, problem)
        }
        return name
    }

    /// `apps.<id>.environments`: a non-empty list of `sandbox` / `production` without duplicates
    /// (a single string, optionally comma-separated, is accepted too, for environment overrides).
    func environments(_ section: ConfigSection, key: String) throws(ConfigurationError) -> [APNsEnvironment] {
        guard section.has(key) else { return [.sandbox, .production] }
        let items = try stringList(section, key: key, of: "environment names")
        guard !items.isEmpty else {
            throw section.error(key, "must list at least one environment")
        }
        var environments: [APNsEnvironment] = []
        for item in items {
            guard let environment = APNsEnvironment(rawValue: item.text) else {
                throw ConfigurationError(
                    key: section.keyPath(key), message: "'\(item.text)' is not an environment; expected sandbox or production",
                    origin: item.origin)
            }
            guard !environments.contains(environment) else {
                throw ConfigurationError(
                    key: section.keyPath(key), message: "'\(item.text)' is listed more than once", origin: item.origin)
            }
            environments.append(environment)
        }
        return environments
    }

    /// `apps.<id>.api-keys`: a list of `sha256:<64 hex>` digests, each optionally followed by a
    /// scope (or one comma-separated string); default none.
    func apiKeys(_ section: ConfigSection, key: String) throws(ConfigurationError) -> [APIKeyGrant] {
        guard section.has(key) else { return [] }
        var digests: [APIKeyGrant] = []
        for item in try stringList(section, key: key, of: "key digests") {
            guard let grant = APIKeyGrant(item.text) else {
                // Never echo the value: it may be a key pasted by mistake instead of its digest.
                throw ConfigurationError(key: section.keyPath(key), message: APIKeyGrant.expectedForm, origin: item.origin)
            }
            digests.append(grant)
        }
        return digests
    }

    /// A list of strings: a YAML sequence of strings, or one string of comma-separated items
    /// (the form environment overrides take).
    func stringList(_ section: ConfigSection, key: String, of what: String) throws(ConfigurationError) -> [(text: String, origin: ConfigOrigin)] {
        guard let node = section.node(key) else { return [] }
        switch node {
        case .sequence(let elements, _):
            var items: [(text: String, origin: ConfigOrigin)] = []
            for element in elements {
                guard case .scalar(let scalar, let origin) = element, scalar.kind == .string else {
                    throw ConfigurationError(
                        key: section.keyPath(key), message: "expected a list of \(what), found \(element.article) in it",
                        origin: element.origin)
                }
                items.append((scalar.text, origin))
            }
            return items
        case .scalar(let scalar, let origin) where scalar.kind == .string:
            return scalar.text.split(separator: ",").map { (String($0).trimmingCharacters(in: .whitespaces), origin) }
        default:
            throw section.error(key, "expected a list of \(what), found \(node.article)")
        }
    }

    /// `apps.<id>.auth`: one method (`token`, `certificate` or `pkcs12`) for every environment,
    /// and/or a method per environment under `sandbox` / `production` (which wins for its
    /// environment). Every environment of `environments` needs one; the credential of no listed
    /// environment is an error. Returns the app's ``AppSettings/auth`` (the shared method, else the
    /// production one, else the sandbox one) and the per-environment ones.
    func credentials(
        _ app: ConfigSection, key: String, environments: [APNsEnvironment]
    ) throws(ConfigurationError) -> (AppAuth, [APNsEnvironment: AppAuth]) {
        guard app.has(key) else { throw app.missing(key) }
        let section = try app.section(key)
        var perEnvironment: [APNsEnvironment: AppAuth] = [:]
        for environment in [APNsEnvironment.sandbox, .production] where section.has(environment.rawValue) {
            guard environments.contains(environment) else {
                throw section.error(
                    environment.rawValue,
                    "the app does not send to \(environment) (environments: \(environments.map(\.rawValue).joined(separator: ", ")))")
            }
            perEnvironment[environment] = try auth(section, key: environment.rawValue)
        }
        let shared: AppAuth? = Self.authKinds.contains(where: { section.has($0) }) || perEnvironment.isEmpty ? try auth(app, key: key) : nil
        for environment in environments where perEnvironment[environment] == nil && shared == nil {
            throw section.missing(environment.rawValue)
        }
        guard let main = shared ?? perEnvironment[.production] ?? perEnvironment[.sandbox] else { throw app.missing(key) }
        return (main, perEnvironment)
    }

    private static let authKinds = ["token", "certificate", "pkcs12"]

    /// One method: exactly one of `token`, `certificate`, `pkcs12` in `parent.key`.
    func auth(_ parent: ConfigSection, key: String) throws(ConfigurationError) -> AppAuth {
        guard parent.has(key) else { throw parent.missing(key) }
        let section = try parent.section(key)
        let present = Self.authKinds.filter { section.has($0) }
        guard present.count == 1, let kind = present.first else {
            let found = present.isEmpty ? "none" : present.joined(separator: " and ")
            throw parent.error(key, "exactly one of token, certificate or pkcs12 is required, found \(found)")
        }
        let method = try section.section(kind)
        switch kind {
        case "token":
            return .token(
                teamID: try appleID(method, "team-id"),
                keyID: try appleID(method, "key-id"),
                keyFile: try requiredPath(method, "key-file"))
        case "certificate":
            return .certificate(
                certificateFile: try requiredPath(method, "certificate-file"),
                keyFile: try requiredPath(method, "key-file"))
        default:
            return .pkcs12(
                file: try requiredPath(method, "file"),
                passphraseFile: try method.path("passphrase-file", baseDirectory: baseDirectory))
        }
    }

    /// A required 10-character `A-Z 0-9` identifier (team id, key id).
    func appleID(_ section: ConfigSection, _ key: String) throws(ConfigurationError) -> String {
        let value = try section.requiredString(key)
        guard value.utf8.count == 10,
            value.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else {
            throw section.error(key, "must be 10 characters of A-Z and 0-9")
        }
        return value
    }

    /// A required file path, resolved against the base directory.
    func requiredPath(_ section: ConfigSection, _ key: String) throws(ConfigurationError) -> String {
        guard let path = try section.path(key, baseDirectory: baseDirectory) else { throw section.missing(key) }
        return path
    }
}
