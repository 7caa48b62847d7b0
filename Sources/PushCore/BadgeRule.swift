/// A badge the server keeps (`aps.badge` given as an object): each device's number lives in
/// Redis, and each notification carries the device's number after the rule applied.
///
/// - `{"increment": N}`: adds N to the device's number;
/// - `{"set": N}`: makes it N (0 removes the badge).
///
/// A closed app cannot change its badge, so the server, which sends the notifications, is the
/// one that can keep the number right. The app resets it when it is opened
/// (`PUT /v1/apps/{app}/devices/{token}/badge`).
public enum BadgeRule: Hashable, Sendable {
    case increment(Int)
    case set(Int)

    /// The largest number kept (a device's badge is a 16-bit counter that stops there).
    public static let maxValue = 65_535
    /// The numbers a device's badge may be set to: by a `set` rule, by the app, by an operator.
    public static let numbers = 0...maxValue

    /// The rule `aps.badge` holds, or `nil` when it holds a number or anything else.
    /// Validation (``APNsPayload/validate(at:pushType:)``) rejects malformed objects.
    init?(json value: JSONValue) {
        guard let object = value.objectValue, object.count == 1, let key = object.keys.first, let amount = object[key]?.intValue
        else { return nil }
        switch key {
        case "increment": self = .increment(amount)
        case "set": self = .set(amount)
        default: return nil
        }
    }

    /// Checks `aps.badge` given as an object: exactly one of `increment` (1 to ``maxValue``) and
    /// `set` (0 to ``maxValue``).
    static func validate(_ object: JSONObject, at path: FieldPath) throws(MessageValidationError) {
        try object.rejectUnknownKeys(["increment", "set"], at: path)
        guard object.count == 1, let key = object.keys.first, let value = object[key] else {
            throw MessageValidationError(path, .invalidValue, "must hold one of increment and set")
        }
        let amount = try value.decodeInt(at: path.key(key))
        let allowed = key == "increment" ? 1...maxValue : numbers
        guard allowed.contains(amount) else {
            throw MessageValidationError(path.key(key), .invalidValue, "must be \(allowed.lowerBound) to \(maxValue), is \(amount)")
        }
    }
}

extension APNsPayload {
    /// The badge rule `aps.badge` holds, `nil` when it holds a number or nothing: whether the
    /// server keeps each device's badge for this notification.
    public var badgeRule: BadgeRule? {
        aps?["badge"].flatMap(BadgeRule.init(json:))
    }
}
