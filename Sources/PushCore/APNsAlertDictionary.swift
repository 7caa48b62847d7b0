/// The dictionary form of `aps.alert`. Keys the payload has but this type does not name stay in
/// the payload untouched.
public struct APNsAlertDictionary: Hashable, Sendable {
    /// `title`.
    public var title: String?
    /// `subtitle`.
    public var subtitle: String?
    /// `body`.
    public var body: String?
    /// `launch-image`: the launch image to show when the user opens the app from the alert.
    public var launchImage: String?
    /// `title-loc-key`: the key of a localized title in the app's strings.
    public var titleLocKey: String?
    /// `title-loc-args`: the arguments of that localized title.
    public var titleLocArgs: [String]?
    /// `subtitle-loc-key`: the key of a localized subtitle.
    public var subtitleLocKey: String?
    /// `subtitle-loc-args`: the arguments of that localized subtitle.
    public var subtitleLocArgs: [String]?
    /// `loc-key`: the key of a localized body.
    public var locKey: String?
    /// `loc-args`: the arguments of that localized body.
    public var locArgs: [String]?

    /// Reads the known keys of an alert dictionary, checking their types.
    init(json object: JSONObject, at path: FieldPath) throws(MessageValidationError) {
        func string(_ key: String) throws(MessageValidationError) -> String? {
            try object[key]?.decodeString(at: path.key(key))
        }
        func strings(_ key: String) throws(MessageValidationError) -> [String]? {
            try object[key]?.decodeStringArray(at: path.key(key))
        }
        title = try string("title")
        subtitle = try string("subtitle")
        body = try string("body")
        launchImage = try string("launch-image")
        titleLocKey = try string("title-loc-key")
        titleLocArgs = try strings("title-loc-args")
        subtitleLocKey = try string("subtitle-loc-key")
        subtitleLocArgs = try strings("subtitle-loc-args")
        locKey = try string("loc-key")
        locArgs = try strings("loc-args")
    }
}
