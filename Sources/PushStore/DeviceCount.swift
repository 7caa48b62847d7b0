import APNsCore

/// How many devices an app has registered, per APNs environment; suspect devices (kept aside,
/// see ``DeviceSuspicion``) are counted apart.
package struct DeviceCount: Hashable, Sendable {
    /// Devices whose latest bind was for the sandbox, suspect ones not included.
    package var sandbox: Int
    /// Devices whose latest bind was for production, suspect ones not included.
    package var production: Int
    /// Sandbox devices kept aside as suspect.
    package var suspectSandbox: Int
    /// Production devices kept aside as suspect.
    package var suspectProduction: Int

    package init(sandbox: Int, production: Int, suspectSandbox: Int = 0, suspectProduction: Int = 0) {
        self.sandbox = sandbox
        self.production = production
        self.suspectSandbox = suspectSandbox
        self.suspectProduction = suspectProduction
    }

    /// Every registered device, suspect ones included.
    package var total: Int { sandbox + production + suspect }

    /// Devices kept aside as suspect, both environments.
    package var suspect: Int { suspectSandbox + suspectProduction }

    /// Devices in `environment` that audiences reach (suspect ones not included).
    package subscript(environment: APNsEnvironment) -> Int {
        switch environment {
        case .sandbox: sandbox
        case .production: production
        }
    }

    /// Suspect devices of `environment`.
    package func suspect(in environment: APNsEnvironment) -> Int {
        switch environment {
        case .sandbox: suspectSandbox
        case .production: suspectProduction
        }
    }

    mutating func add(_ count: Int, in environment: APNsEnvironment) {
        switch environment {
        case .sandbox: sandbox += count
        case .production: production += count
        }
    }

    mutating func addSuspect(_ count: Int, in environment: APNsEnvironment) {
        switch environment {
        case .sandbox: suspectSandbox += count
        case .production: suspectProduction += count
        }
    }
}
