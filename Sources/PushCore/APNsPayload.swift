import Foundation

/// The notification payload sent to APNs (the job's `notification` field): the `aps`
/// dictionary plus any custom top-level keys, kept in order exactly as the producer wrote them.
///
/// The payload is held as JSON rather than as typed fields so that custom keys and `aps` keys
/// this type does not know (Apple adds them every year) reach the device unchanged. Typed views
/// of the common keys are computed on demand; ``PushJob/validate()`` checks the known keys' types.
public struct APNsPayload: Hashable, Sendable {
    /// The whole payload object.
    public var object: JSONObject

    /// A payload from its JSON object.
    public init(_ object: JSONObject) {
        self.object = object
    }

    /// The `aps` dictionary, if present and an object.
    public var aps: JSONObject? {
        object["aps"]?.objectValue
    }

    /// The keys besides `aps`, in order: the app's own data.
    public var customKeys: JSONObject {
        var custom = object
        custom["aps"] = nil
        return custom
    }

    /// `aps.alert`, or `nil` when absent or malformed.
    public var alert: APNsAlert? {
        aps?["alert"].flatMap { try? APNsAlert(json: $0, at: .root) }
    }

    /// `aps.sound`, or `nil` when absent or malformed.
    public var sound: APNsSound? {
        aps?["sound"].flatMap { try? APNsSound(json: $0, at: .root) }
    }

    /// `aps.badge`, or `nil` when absent or not an integer.
    public var badge: Int? {
        aps?["badge"]?.intValue
    }

    /// Whether `aps.content-available` is 1: the notification wakes the app in the background.
    public var isContentAvailable: Bool {
        aps?["content-available"]?.intValue == 1
    }

    /// The payload as APNs receives it: compact JSON, keys in order (see
    /// ``JSONValue/compactData()``). Its size is what APNs's limit applies to.
    ///
    /// Cannot fail: every ``JSONValue`` has a JSON text.
    public func payloadData() -> Data {
        JSONValue.object(object).compactData()
    }

    /// The size of ``payloadData()`` in bytes.
    public var byteCount: Int {
        JSONValue.object(object).compactByteCount
    }
}
