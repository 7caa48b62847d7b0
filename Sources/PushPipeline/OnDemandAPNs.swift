public import APNs
public import APNsCore
public import PushConfiguration
import Synchronization

/// How the API and the CLI reach APNs outside campaigns (channel management, test sends): one
/// client, and each app's credentials read from their files on first use, so a process that
/// never calls APNs never reads key files.
public final class OnDemandAPNs: Sendable {
    public let client: APNsClient
    private let loaded = Mutex<[String: PushApp]>([:])

    public init(client: APNsClient) {
        self.client = client
    }

    /// The app with its credentials, loaded on the first call for it.
    ///
    /// - Throws: the ``ConfigurationError`` naming the credential setting that cannot be read.
    public func app(_ settings: AppSettings) throws(ConfigurationError) -> PushApp {
        if let known = loaded.withLock({ $0[settings.id] }) { return known }
        let app = try PushApp.load(settings)
        loaded.withLock { $0[settings.id] = app }
        return app
    }

    /// The app's credential for `environment`.
    public func credential(of settings: AppSettings, environment: APNsEnvironment) throws(ConfigurationError) -> APNsCredential {
        try app(settings).credential(for: environment)
    }

    public func shutdown() async {
        await client.shutdown()
    }
}
