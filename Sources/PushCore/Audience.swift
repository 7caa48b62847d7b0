public import APNsCore

/// Who a job is for (the job's `audience` field): exactly one selector.
public enum Audience: Hashable, Sendable {
    /// Explicit device tokens, 1 to ``maxTokens``.
    case tokens([DeviceToken])
    /// Users by openid, resolved through the registry to the device each last logged in on.
    case openIDs([String])
    /// Devices selected by tags.
    case tags(TagExpression)
    /// Every registered device of the app in the job's environment.
    case broadcast
    /// The devices subscribed to a Live Activity broadcast channel (iOS 18): one request to
    /// APNs, which delivers it to them.
    case channel(APNsChannelID)
    /// The devices running one Live Activity, by the update tokens they registered for it
    /// (kept until they expire).
    case activity(LiveActivityID)
    /// The devices whose last reported location (not expired) lies in an area, optionally only
    /// those matching a tag expression too.
    case area(GeoArea, tags: TagExpression?)

    /// The most tokens one job may list; larger sends are several jobs or a tag or broadcast.
    public static let maxTokens = 10_000

    /// The selector's name in JSON: `tokens`, `openids`, `tags`, `broadcast`, `channel`,
    /// `activity` or `area`.
    public var kind: String {
        switch self {
        case .tokens: "tokens"
        case .openIDs: "openids"
        case .tags: "tags"
        case .broadcast: "broadcast"
        case .channel: "channel"
        case .activity: "activity"
        case .area: "area"
        }
    }
}

extension Audience {
    /// The tags a tag audience selects by (`all` and `any`, not `none`), without repeats; none
    /// for the other selectors. The hour-of-day statistics count a job's sends and receipts
    /// for each.
    public var addressedTags: [String] {
        let expression: TagExpression
        switch self {
        case .tags(let tags), .area(_, tags: let tags?): expression = tags
        default: return []
        }
        var seen = Set<String>()
        return (expression.all + expression.any).filter { seen.insert($0).inserted }
    }

    /// What a receipt of a stored job counts into, decoding only its `audience` and push type (a
    /// receipt's hot path: the rest of the job is not needed): the tags the job addressed
    /// (``addressedTags``), and whether its devices came from the app's registry of device
    /// tokens (openids, tags, a broadcast or an area, of a push type other than `voip` and
    /// `liveactivity`), so that the receipt is a registered device's. A job without a readable
    /// audience has neither.
    public static func receiptTargets(ofJob json: JSONValue) -> (tags: [String], registeredDevices: Bool) {
        guard let object = json.objectValue, let value = object["audience"],
            let audience = try? Audience(json: value, at: FieldPath.root.key("audience"))
        else { return ([], false) }
        let pushType = object["headers"]?.objectValue?["push-type"]?.stringValue
        switch audience {
        case .openIDs, .tags, .broadcast, .area:
            return (audience.addressedTags, pushType != "voip" && pushType != "liveactivity")
        case .tokens, .channel, .activity:
            return (audience.addressedTags, false)
        }
    }
}
