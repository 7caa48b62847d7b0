/// The dictionary form of `aps.sound`, used for critical alerts.
public struct APNsSoundDictionary: Hashable, Sendable {
    /// `critical`: 1 for a critical alert sound.
    public var isCritical: Bool
    /// `name`: a sound file in the app bundle, or `default`.
    public var name: String
    /// `volume`: 0 (silent) to 1 (full) for critical alerts.
    public var volume: Double?

    /// Reads a sound dictionary, checking the types and ranges of its known keys.
    init(json object: JSONObject, at path: FieldPath) throws(MessageValidationError) {
        name = try object.require("name", at: path).decodeString(at: path.key("name"))
        if let critical = object["critical"] {
            let criticalPath = path.key("critical")
            let flag = try critical.decodeInt(at: criticalPath)
            guard flag == 0 || flag == 1 else {
                throw MessageValidationError(criticalPath, .invalidValue, "must be 0 or 1, got \(flag)")
            }
            isCritical = flag == 1
        } else {
            isCritical = false
        }
        if let value = object["volume"] {
            let volumePath = path.key("volume")
            let volume = try value.decodeNumber(at: volumePath)
            guard (0...1).contains(volume) else {
                throw MessageValidationError(volumePath, .invalidValue, "must be between 0 and 1, got \(volume)")
            }
            self.volume = volume
        } else {
            volume = nil
        }
    }
}
