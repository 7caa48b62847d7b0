import APNsCore

extension APNsPayload: Codable {
    /// The `aps.interruption-level` values APNs documents.
    static let interruptionLevels: Set<String> = ["passive", "active", "time-sensitive", "critical"]
    /// The `aps.event` values of a Live Activity update.
    static let liveActivityEvents: Set<String> = ["start", "update", "end"]

    /// Decodes the `notification` object; its content is checked by ``validate(at:pushType:)``.
    init(json: JSONValue, at path: FieldPath) throws(MessageValidationError) {
        self.init(try json.decodeObject(at: path))
    }

    /// The `notification` object.
    public var jsonValue: JSONValue {
        .object(object)
    }

    /// Checks that `aps` is present, that the `aps` keys APNs documents have the documented
    /// types and ranges, and that the payload fits the push type's size limit. Unknown `aps`
    /// keys and custom keys are not checked.
    func validate(at path: FieldPath, pushType: APNsPushType) throws(MessageValidationError) {
        let apsPath = path.key("aps")
        let aps = try object.require("aps", at: path).decodeObject(at: apsPath)
        for (key, value) in aps {
            try Self.validateAPSValue(value, forKey: key, at: apsPath.key(key))
        }
        let limit = pushType.maxPayloadBytes
        let size = byteCount
        guard size <= limit else {
            throw MessageValidationError(
                path, .payloadTooLarge, "is \(size) bytes, more than the \(limit) APNs accepts for \(pushType)")
        }
    }

    private static func validateAPSValue(
        _ value: JSONValue, forKey key: String, at path: FieldPath
    ) throws(MessageValidationError) {
        switch key {
        case "alert":
            _ = try APNsAlert(json: value, at: path)
        case "sound":
            _ = try APNsSound(json: value, at: path)
        case "badge":
            if let rule = value.objectValue {
                try BadgeRule.validate(rule, at: path)
            } else {
                let integer = try value.decodeInt(at: path)
                guard integer >= 0 else { throw MessageValidationError(path, .invalidValue, "must be at least 0") }
            }
        case "stale-date", "timestamp", "dismissal-date":
            let integer = try value.decodeInt(at: path)
            guard integer >= 0 else { throw MessageValidationError(path, .invalidValue, "must be at least 0") }
        case "content-available", "mutable-content":
            guard try value.decodeInt(at: path) == 1 else {
                throw MessageValidationError(path, .invalidValue, "must be 1 (leave it out instead of 0)")
            }
        case "interruption-level":
            try validateMember(of: interruptionLevels, value, at: path)
        case "event":
            try validateMember(of: liveActivityEvents, value, at: path)
        case "relevance-score":
            let score = try value.decodeNumber(at: path)
            guard (0...1).contains(score) else {
                throw MessageValidationError(path, .invalidValue, "must be between 0 and 1, got \(score)")
            }
        case "thread-id", "category", "target-content-id", "filter-criteria":
            _ = try value.decodeString(at: path)
        case "attributes-type":
            let name = try value.decodeString(at: path)
            guard TokenKind.isValidAttributesType(name) else {
                throw MessageValidationError(
                    path, .invalidValue, "must be a type name: 1 to \(TokenKind.maxAttributesTypeBytes) characters of A-Z a-z 0-9 _ .")
            }
        case "input-push-token":
            guard try value.decodeInt(at: path) == 1 else {
                throw MessageValidationError(path, .invalidValue, "must be 1: the started activity reports an update token")
            }
        case "input-push-channel":
            let text = try value.decodeString(at: path)
            guard APNsChannelID(text) != nil else {
                throw MessageValidationError(path, .invalidValue, "must be a broadcast channel id (base64)")
            }
        case "content-state", "attributes":
            _ = try value.decodeObject(at: path)
        default:
            break
        }
    }

    private static func validateMember(
        of allowed: Set<String>, _ value: JSONValue, at path: FieldPath
    ) throws(MessageValidationError) {
        let string = try value.decodeString(at: path)
        guard allowed.contains(string) else {
            throw MessageValidationError(
                path, .invalidValue, "'\(string)' is not one of \(allowed.sorted().joined(separator: ", "))")
        }
    }

    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONValue(from: decoder), at: FieldPath(codingPath: decoder.codingPath))
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }
}
