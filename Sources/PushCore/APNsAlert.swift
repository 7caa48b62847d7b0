/// `aps.alert`: either a plain string (shown as the body) or a dictionary.
public enum APNsAlert: Hashable, Sendable {
    /// `"alert": "…"`: the body text.
    case text(String)
    /// `"alert": {…}`: title, body, localization keys and so on.
    case dictionary(APNsAlertDictionary)

    /// Reads `aps.alert`, checking the types of its known keys.
    init(json: JSONValue, at path: FieldPath) throws(MessageValidationError) {
        switch json {
        case .string(let text): self = .text(text)
        case .object(let object): self = .dictionary(try APNsAlertDictionary(json: object, at: path))
        default: throw .type(path, expected: "a string or an object", got: json)
        }
    }
}
