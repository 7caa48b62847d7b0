/// A Live Activity broadcast channel's id, as APNs's management API assigns it (the
/// `apns-channel-id` header): base64 text, for example `dHN0LXNyY2gtY2hubA==`.
public struct APNsChannelID: Hashable, Sendable, CustomStringConvertible {
    /// The longest id accepted; APNs's ids are the base64 of 16 bytes (24 characters).
    public static let maxLength = 128

    public let rawValue: String

    /// Checks the text: 1 to ``maxLength`` characters of the base64 alphabet (`A–Z a–z 0–9 + /`),
    /// with at most two `=` at the end.
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
        guard (1...Self.maxLength).contains(utf8.count) else { return nil }
        let padding = utf8.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2, padding < utf8.count else { return nil }
        let body = utf8.dropLast(padding)
        guard body.allSatisfy({ Self.isBase64($0) }) else { return nil }
        rawValue = text
    }

    public var description: String { rawValue }

    private static func isBase64(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default: false
        }
    }
}

/// What APNs keeps of a channel's broadcasts for devices that are offline (the
/// `message-storage-policy` of a channel).
public enum APNsMessageStoragePolicy: Int, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Nothing is stored: a broadcast reaches the devices online when it is sent, and must carry
    /// `apns-expiration: 0`.
    case noMessageStored = 0
    /// The most recent broadcast is stored for devices that come online later.
    case mostRecentMessageStored = 1

    /// The name used in PushFleet's API and CLI: `none` or `most-recent`.
    public var name: String {
        switch self {
        case .noMessageStored: "none"
        case .mostRecentMessageStored: "most-recent"
        }
    }

    /// A policy by its name (``name``) or Apple's number (`0`, `1`).
    public init?(name: String) {
        switch name {
        case "none", "0": self = .noMessageStored
        case "most-recent", "1": self = .mostRecentMessageStored
        default: return nil
        }
    }

    public var description: String { name }
}

/// A broadcast channel as APNs describes it (`GET /1/apps/<bundle>/channels`).
public struct APNsChannel: Hashable, Sendable {
    public var id: APNsChannelID
    public var messageStoragePolicy: APNsMessageStoragePolicy

    public init(id: APNsChannelID, messageStoragePolicy: APNsMessageStoragePolicy) {
        self.id = id
        self.messageStoragePolicy = messageStoragePolicy
    }

    /// Apple's limit of channels per app (bundle id) and environment.
    public static let maxPerApp = 10_000
}

extension APNsEnvironment {
    /// The host of Apple's channel management API for this environment.
    public var channelManagementHost: String {
        switch self {
        case .sandbox: "api-manage-broadcast.sandbox.push.apple.com"
        case .production: "api-manage-broadcast.push.apple.com"
        }
    }

    /// The port of Apple's channel management API: 2195 for the sandbox, 2196 for production.
    public var channelManagementPort: Int {
        switch self {
        case .sandbox: 2195
        case .production: 2196
        }
    }
}
