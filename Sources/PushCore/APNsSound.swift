/// `aps.sound`: a sound name, or a dictionary for critical alerts.
public enum APNsSound: Hashable, Sendable {
    /// `"sound": "…"`: a sound file in the app bundle, or `default`.
    case named(String)
    /// `"sound": {…}`: a critical alert sound with its volume.
    case dictionary(APNsSoundDictionary)

    /// Reads `aps.sound`, checking the types and ranges of its known keys.
    init(json: JSONValue, at path: FieldPath) throws(MessageValidationError) {
        switch json {
        case .string(let name): self = .named(name)
        case .object(let object): self = .dictionary(try APNsSoundDictionary(json: object, at: path))
        default: throw .type(path, expected: "a string or an object", got: json)
        }
    }
}
