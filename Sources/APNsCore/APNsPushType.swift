/// The value of the `apns-push-type` header.
///
/// A closed set in Apple's documentation, modelled as a struct with static members so that the
/// set can grow without breaking callers. ``init(rawValue:)`` accepts only the documented values.
public struct APNsPushType: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    private init(known rawValue: String) {
        self.rawValue = rawValue
    }

    /// Returns `nil` for a value APNs does not document.
    public init?(rawValue: String) {
        guard let known = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = known
    }

    public static let alert = Self(known: "alert")
    public static let background = Self(known: "background")
    public static let voip = Self(known: "voip")
    public static let location = Self(known: "location")
    public static let complication = Self(known: "complication")
    public static let fileprovider = Self(known: "fileprovider")
    public static let mdm = Self(known: "mdm")
    public static let liveactivity = Self(known: "liveactivity")
    public static let pushtotalk = Self(known: "pushtotalk")
    public static let widgets = Self(known: "widgets")
    public static let controls = Self(known: "controls")

    public static let allCases: [APNsPushType] = [
        .alert, .background, .voip, .location, .complication, .fileprovider, .mdm, .liveactivity,
        .pushtotalk, .widgets, .controls,
    ]

    /// The suffix APNs requires on the bundle id in `apns-topic` for this push type, if any.
    /// `mdm` uses the MDM certificate's topic as is, so it has no suffix either.
    public var topicSuffix: String? {
        switch rawValue {
        case "voip": ".voip"
        case "location": ".location-query"
        case "complication": ".complication"
        case "fileprovider": ".pushkit.fileprovider"
        case "liveactivity": ".push-type.liveactivity"
        case "pushtotalk": ".voip-ptt"
        case "widgets": ".push-type.widgets"
        case "controls": ".push-type.controls"
        default: nil
        }
    }

    /// The `apns-topic` for an app's bundle id with this push type.
    public func topic(forBundleID bundleID: String) -> String {
        bundleID + (topicSuffix ?? "")
    }

    /// The largest payload APNs accepts for this push type, in bytes.
    public var maxPayloadBytes: Int {
        self == .voip ? 5120 : 4096
    }

    /// Push types that must not be sent with priority 10.
    public var forbidsImmediatePriority: Bool {
        self == .background
    }

    public var description: String { rawValue }
}

extension APNsPushType: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let value = APNsPushType(rawValue: raw) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "unknown push type '\(raw)'")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
