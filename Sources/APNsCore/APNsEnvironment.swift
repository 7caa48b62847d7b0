/// Which APNs service a notification goes to. A token registered in one environment is unknown
/// to the other.
public enum APNsEnvironment: String, Hashable, Sendable, Codable, CaseIterable {
    case sandbox
    case production

    /// The other environment.
    public var other: APNsEnvironment {
        self == .sandbox ? .production : .sandbox
    }

    /// Apple's host for this environment.
    public var host: String {
        switch self {
        case .sandbox: "api.sandbox.push.apple.com"
        case .production: "api.push.apple.com"
        }
    }
}
