import APNsCore

/// How many devices an app has registered, per APNs environment.
public struct DeviceCount: Hashable, Sendable {
    /// Devices whose latest bind was for the sandbox.
    public var sandbox: Int
    /// Devices whose latest bind was for production.
    public var production: Int

    public init(sandbox: Int, production: Int) {
        self.sandbox = sandbox
        self.production = production
    }

    /// Devices in both environments.
    public var total: Int { sandbox + production }

    /// Devices in `environment`.
    public subscript(environment: APNsEnvironment) -> Int {
        switch environment {
        case .sandbox: sandbox
        case .production: production
        }
    }
}
