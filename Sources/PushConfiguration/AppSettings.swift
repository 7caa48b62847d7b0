import APNsCore
public import Foundation

/// One app PushFleet sends for (`apps.<id>:`).
public struct AppSettings: Sendable, Equatable {
    /// The app id: the key under `apps`, 1–64 characters of `A-Z a-z 0-9 . _ -`.
    public var id: String
    /// The bundle id, used as the APNs topic (`bundle-id`); required.
    public var bundleID: String
    /// More bundle ids the app's jobs may address in `headers.topic` (`extra-topics`: the app's
    /// extensions or variants sharing its credential), each with the push type's suffix as for
    /// ``bundleID``; default none.
    public var extraTopics: [String]
    /// The APNs environments the app sends to (`environments`); default both, in the order written.
    public var environments: [APNsEnvironment]
    /// How the app authenticates to APNs (`auth`): the credential of every environment that has
    /// none of its own in ``environmentAuth``; required.
    public var auth: AppAuth
    /// Credentials of single environments (`auth.sandbox`, `auth.production`: separate
    /// development and production certificates, say); default none. See ``auth(for:)``.
    public var environmentAuth: [APNsEnvironment: AppAuth]
    /// Fleet-wide sends per second (`rate-per-second`), ≥ 0; default 0 = unlimited.
    public var ratePerSecond: Double
    /// Rate-limiter burst (`burst`), ≥ 1; default `max(1, ⌈ratePerSecond⌉)`.
    public var burst: Int
    /// A worker pauses after every this many sends (`sleep-after`), ≥ 0; default 0 = never.
    public var sleepAfter: Int
    /// Length of that pause in milliseconds (`sleep-ms`), ≥ 0; default 0.
    public var sleepMilliseconds: Int
    /// Overrides `apns.connections-per-pool` for this app (`connections-per-pool`), ≥ 1; default none.
    public var connectionsPerPool: Int?
    /// The app's HTTP API keys as digests with their scope (`api-keys`: a list of `sha256:<hex>`,
    /// each optionally followed by ` device`); default none.
    public var apiKeys: [APIKeyGrant]
    /// A file of more keys, one per line in the same form (`api-keys-file`, e.g. a mounted
    /// secret), read when the API starts and again whenever it changes (``APIKeyGrant``);
    /// default none. An app without any key cannot be used through the API.
    public var apiKeysFile: String?
    /// How the app's notifications reach APNs (`transport`): `http2` (the default) or `binary`,
    /// the legacy binary interface, for gateways that still speak it (certificates only).
    public var transport: AppTransport = .http2
    /// The time zone the app's hour-of-day statistics are kept in (`time-zone`): an IANA name
    /// (`Europe/Paris`), validated against the machine's time zone database; default `UTC`.
    public var timeZone: String = "UTC"

    /// Creates app settings. `burst: nil` (the default) resolves to `max(1, ⌈ratePerSecond⌉)`; the
    /// other parameters have the documented defaults.
    public init(
        id: String, bundleID: String, extraTopics: [String] = [], environments: [APNsEnvironment] = [.sandbox, .production], auth: AppAuth,
        environmentAuth: [APNsEnvironment: AppAuth] = [:], ratePerSecond: Double = 0, burst: Int? = nil, sleepAfter: Int = 0,
        sleepMilliseconds: Int = 0,
        connectionsPerPool: Int? = nil, apiKeys: [APIKeyGrant] = [], apiKeysFile: String? = nil
    ) {
        self.id = id
        self.bundleID = bundleID
        self.extraTopics = extraTopics
        self.environments = environments
        self.auth = auth
        self.environmentAuth = environmentAuth
        self.ratePerSecond = ratePerSecond
        self.burst = burst ?? Self.defaultBurst(ratePerSecond: ratePerSecond)
        self.sleepAfter = sleepAfter
        self.sleepMilliseconds = sleepMilliseconds
        self.connectionsPerPool = connectionsPerPool
        self.apiKeys = apiKeys
        self.apiKeysFile = apiKeysFile
    }

    /// `max(1, ⌈ratePerSecond⌉)`, clamped to `Int32.max` (and 1 for a non-finite rate).
    public static func defaultBurst(ratePerSecond: Double) -> Int {
        guard ratePerSecond.isFinite, ratePerSecond > 1 else { return 1 }
        return Int(min(ratePerSecond.rounded(.up), Double(Int32.max)))
    }

    /// The credential the app sends to `environment` with: its own, else ``auth``.
    public func auth(for environment: APNsEnvironment) -> AppAuth {
        environmentAuth[environment] ?? auth
    }

    /// The bundle ids a job of the app may address: ``bundleID`` first, then ``extraTopics``.
    public var topicBundleIDs: [String] { [bundleID] + extraTopics }

    /// The pause after every ``sleepAfter`` sends, as a `Duration`.
    public var sleepDuration: Duration { .milliseconds(sleepMilliseconds) }
}

/// How an app's notifications reach APNs (`apps.<id>.transport`).
public enum AppTransport: String, Sendable, Equatable, CaseIterable {
    /// APNs's HTTP/2 provider API.
    case http2
    /// APNs's legacy binary interface (command 2 frames, error responses, the feedback service).
    case binary
}

extension AppSettings {
    /// ``timeZone`` as a `TimeZone`; UTC for a name the machine does not know (the
    /// configuration refuses those).
    public var statisticsTimeZone: TimeZone {
        TimeZone(identifier: timeZone) ?? TimeZone(identifier: "UTC")!
    }
}
