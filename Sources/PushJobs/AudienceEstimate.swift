public import PushCore

/// How many devices an audience reaches, as far as the registry's counts tell without reading
/// every device: exact for a broadcast (the environment's devices) and for listed tokens; an
/// upper bound for openids (each is at most one device) and for tags (devices with every `all`
/// tag are at most the rarest one's; with one of the `any` tags at most their sum; `none` is not
/// subtracted, and tag counts hold both environments), and for an area (the devices located in
/// it, of both environments), never above the environment's devices.
/// A channel's subscribers only APNs knows.
public struct AudienceEstimate: Hashable, Sendable {
    /// The devices reached, or at most reached; `nil` when the registry cannot tell.
    public var devices: Int?
    /// Whether ``devices`` is exact.
    public var isExact: Bool

    public init(devices: Int?, isExact: Bool) {
        self.devices = devices
        self.isExact = isExact
    }

    /// The estimate of `audience` from the environment's device count, the app's tag counts and,
    /// for an activity, its update tokens; for an area, the devices located in it (of either
    /// environment).
    public init(_ audience: Audience, environmentDevices: Int, tagCounts: [String: Int], activityTokens: Int? = nil, locatedDevices: Int? = nil) {
        switch audience {
        case .broadcast:
            self.init(devices: environmentDevices, isExact: true)
        case .tokens(let tokens):
            self.init(devices: Set(tokens).count, isExact: true)
        case .openIDs(let openIDs):
            self.init(devices: min(Set(openIDs).count, environmentDevices), isExact: false)
        case .tags(let expression):
            let bound = Self.bound(expression, environmentDevices, tagCounts)
            self.init(devices: bound, isExact: bound == 0)
        case .area(_, let tags):
            var bound = min(environmentDevices, locatedDevices ?? environmentDevices)
            if let tags { bound = min(bound, Self.bound(tags, environmentDevices, tagCounts)) }
            self.init(devices: bound, isExact: bound == 0)
        case .channel:
            self.init(devices: nil, isExact: false)
        case .activity:
            self.init(devices: activityTokens, isExact: activityTokens != nil)
        }
    }

    /// At most the devices a tag expression selects: those with every `all` tag are at most the
    /// rarest one's; with one of the `any` tags at most their sum.
    private static func bound(_ expression: TagExpression, _ environmentDevices: Int, _ tagCounts: [String: Int]) -> Int {
        var bound = environmentDevices
        if !expression.all.isEmpty {
            bound = min(bound, expression.all.map { tagCounts[$0] ?? 0 }.min() ?? 0)
        }
        if !expression.any.isEmpty {
            bound = min(bound, expression.any.reduce(0) { $0 + (tagCounts[$1] ?? 0) })
        }
        return bound
    }
}
