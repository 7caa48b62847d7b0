import Crypto
import Logging
import PushConfiguration
import Synchronization

/// The API keys of every app, as SHA-256 digests with their scope; a presented key is hashed and
/// compared with each of the app's digests in constant time (every digest is compared, whatever
/// matched).
struct APIKeyring: Sendable, Equatable {
    private let grants: [String: [Grant]]

    private struct Grant: Sendable, Equatable {
        let bytes: [UInt8]
        let scope: APIKeyScope
    }

    init(_ grants: [String: [APIKeyGrant]]) {
        self.grants = grants.mapValues { $0.map { Grant(bytes: $0.digest.bytes, scope: $0.scope) } }
    }

    /// The scope `key` holds for `app`; nil when it is not one of the app's keys. A digest listed
    /// with two scopes grants the wider one.
    func scope(of key: String, for app: String) -> APIKeyScope? {
        let presented = Array(SHA256.hash(data: Array(key.utf8)))
        var matched: APIKeyScope?
        for grant in grants[app] ?? [] {
            let equal = Self.constantTimeEqual(presented, grant.bytes)
            if equal, matched.map({ $0 < grant.scope }) ?? true {
                matched = grant.scope
            }
        }
        return matched
    }

    /// Every app's keys read from the configuration, the `api-keys-file`s included.
    ///
    /// - Throws: The first app's ``ConfigurationError`` (it never echoes a line of the file).
    static func load(_ apps: some Sequence<AppSettings>) throws(ConfigurationError) -> [String: [APIKeyGrant]] {
        var grants: [String: [APIKeyGrant]] = [:]
        for app in apps {
            grants[app.id] = try app.allAPIKeys()
        }
        return grants
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices {
            difference |= a[index] ^ b[index]
        }
        return difference == 0
    }
}

/// The keyring the API answers with, replaced when an app's `api-keys-file` changes: rotating a
/// key is writing the file (or updating the mounted secret), no restart. A file that no longer
/// parses leaves the keys as they were and is logged (the line number, never its text) once per
/// distinct error, not at every reload, and once more when the files read cleanly again.
final class LiveAPIKeyring: Sendable {
    private struct State {
        var keyring: APIKeyring
        /// The error of the last reload that failed, until one succeeds.
        var failure: String?
    }

    private let current: Mutex<State>
    private let apps: [AppSettings]
    private let logger: Logger

    /// How often the key files are read again.
    static let reloadInterval: Duration = .seconds(2)

    init(apps: [AppSettings], logger: Logger) throws(ConfigurationError) {
        self.apps = apps
        self.logger = logger
        let grants = try APIKeyring.load(apps)
        for app in apps where grants[app.id]?.isEmpty ?? true {
            logger.notice("app \(app.id) has no API key: every API call for it is refused", metadata: ["app": "\(app.id)"])
        }
        current = Mutex(State(keyring: APIKeyring(grants)))
    }

    /// The keys as they are now.
    var keyring: APIKeyring { current.withLock { $0.keyring } }

    /// Reads every key file again; returns whether the keys changed.
    @discardableResult
    func reload() -> Bool {
        let grants: [String: [APIKeyGrant]]
        do {
            grants = try APIKeyring.load(apps)
        } catch {
            let failure = "\(error.key): \(error.message)"
            let isNew = current.withLock { state in
                defer { state.failure = failure }
                return state.failure != failure
            }
            if isNew {
                logger.error("API keys not reloaded, the previous keys stay in use", metadata: ["key": "\(error.key)", "error": "\(error.message)"])
            }
            return false
        }
        let fresh = APIKeyring(grants)
        let (changed, recovered) = current.withLock { state in
            defer { state = State(keyring: fresh) }
            return (state.keyring != fresh, state.failure != nil)
        }
        if changed {
            let counts = apps.map { "\($0.id)=\(grants[$0.id]?.count ?? 0)" }.joined(separator: " ")
            logger.notice("API keys reloaded", metadata: ["keys": "\(counts)"])
        } else if recovered {
            logger.notice("API key files read again without errors; the keys are unchanged")
        }
        return changed
    }

    /// Reloads every ``reloadInterval`` until the task is cancelled; nothing to do when no app
    /// has a key file.
    func watch() async {
        guard apps.contains(where: { $0.apiKeysFile != nil }) else { return }
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: Self.reloadInterval)
            } catch {
                return
            }
            reload()
        }
    }
}
