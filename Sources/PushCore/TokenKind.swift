public import APNsCore

/// Which of a device's tokens a registration holds. Each kind has a registry of its own
/// (``registry(of:)``), with the same bind, openid, tags, counts and feedback as device tokens,
/// so a job reaches the right tokens by the same audiences: a VoIP push reaches VoIP tokens, a
/// Live Activity start reaches the push-to-start tokens of its attributes type
/// (``PushJob/tokenKind``).
public enum TokenKind: Hashable, Sendable, CustomStringConvertible {
    /// The token of `registerForRemoteNotifications`: alerts, background, widgets, Live
    /// Activity updates sent by token… The default.
    case device
    /// A PushKit VoIP token (push type `voip`).
    case voip
    /// An ActivityKit push-to-start token of one `ActivityAttributes` type (push type
    /// `liveactivity`, `aps.event` `start`, `aps.attributes-type` that type).
    case pushToStart(attributesType: String)

    /// The longest attributes type name accepted.
    public static let maxAttributesTypeBytes = 64

    /// `device`, `voip` or `push-to-start:<AttributesType>`; `nil` otherwise (see
    /// ``isValidAttributesType(_:)``).
    public init?(_ text: String) {
        switch text {
        case "device": self = .device
        case "voip": self = .voip
        default:
            let prefix = "push-to-start:"
            guard text.hasPrefix(prefix) else { return nil }
            let type = String(text.dropFirst(prefix.count))
            guard Self.isValidAttributesType(type) else { return nil }
            self = .pushToStart(attributesType: type)
        }
    }

    public var description: String {
        switch self {
        case .device: "device"
        case .voip: "voip"
        case .pushToStart(let type): "push-to-start:\(type)"
        }
    }

    /// The registry that holds the kind's tokens of `app`: the app's own for device tokens,
    /// `<app>~voip`, `<app>~start~<AttributesType>`. `~` is in no app id, so no registry of one
    /// app is another app's.
    public func registry(of app: String) -> String {
        switch self {
        case .device: app
        case .voip: app + "~voip"
        case .pushToStart(let type): app + "~start~" + type
        }
    }

    /// Whether `registry` (a name ``registry(of:)`` gives) holds an app's device tokens, not
    /// another kind's.
    public static func holdsDeviceTokens(_ registry: String) -> Bool {
        !registry.contains("~")
    }

    /// A Swift type name as ActivityKit reports it: 1 to 64 characters of `A-Z a-z 0-9 _ .`.
    public static func isValidAttributesType(_ name: String) -> Bool {
        name.isIdentifier(maxBytes: maxAttributesTypeBytes, punctuation: "_.")
    }
}

extension PushJob {
    /// The kind of token the job goes to: VoIP tokens for a `voip` push, the push-to-start tokens
    /// of its attributes type for a Live Activity `start`, device tokens otherwise. Explicit
    /// `tokens` are sent as given; the other audiences are read from the kind's registry.
    public var tokenKind: TokenKind {
        if headers.pushType == .voip { return .voip }
        if headers.pushType == .liveactivity, let aps = notification.aps, aps["event"]?.stringValue == "start",
            let type = aps["attributes-type"]?.stringValue
        {
            return .pushToStart(attributesType: type)
        }
        return .device
    }
}
