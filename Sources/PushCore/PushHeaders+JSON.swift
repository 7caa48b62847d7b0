import APNsCore

extension PushHeaders: Codable {
    static let fieldNames: Set<String> = ["push-type", "priority", "expiration", "collapse-id", "topic"]

    /// Decodes the `headers` object; unknown keys are rejected.
    init(json: JSONValue, at path: FieldPath) throws(MessageValidationError) {
        let object = try json.decodeObject(at: path)
        try object.rejectUnknownKeys(Self.fieldNames, at: path)

        let pushTypePath = path.key("push-type")
        let rawPushType = try object.require("push-type", at: path).decodeString(at: pushTypePath)
        guard let pushType = APNsPushType(rawValue: rawPushType) else {
            let known = APNsPushType.allCases.map(\.rawValue).joined(separator: ", ")
            throw MessageValidationError(pushTypePath, .unknownPushType, "'\(rawPushType)' is not one of \(known)")
        }
        self.init(pushType: pushType)

        if let value = object["priority"] {
            let priorityPath = path.key("priority")
            let raw = try value.decodeInt(at: priorityPath)
            guard let priority = APNsPriority(rawValue: raw) else {
                throw MessageValidationError(priorityPath, .invalidValue, "must be 10, 5 or 1, got \(raw)")
            }
            self.priority = priority
        }
        expiration = try object["expiration"]?.decodeInt(at: path.key("expiration"))
        collapseID = try object["collapse-id"]?.decodeString(at: path.key("collapse-id"))
        topic = try object["topic"]?.decodeString(at: path.key("topic"))
    }

    /// The `headers` object, in schema order.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["push-type": .string(pushType.rawValue)]
        object["priority"] = priority.map { .number(JSONNumber($0.rawValue)) }
        object["expiration"] = expiration.map { .number(JSONNumber($0)) }
        object["collapse-id"] = collapseID.map(JSONValue.string)
        object["topic"] = topic.map(JSONValue.string)
        return .object(object)
    }

    /// Checks ranges and the combination with the push type: `expiration` at least 0, a
    /// `collapse-id` of 1 to 64 bytes of UTF-8, a non-empty `topic`, and no priority 10 for
    /// push types that forbid it.
    func validate(at path: FieldPath) throws(MessageValidationError) {
        if let expiration, expiration < 0 {
            throw MessageValidationError(path.key("expiration"), .invalidValue, "must be at least 0")
        }
        if let collapseID {
            let bytes = collapseID.utf8.count
            guard bytes > 0 else {
                throw MessageValidationError(path.key("collapse-id"), .invalidValue, "must not be empty")
            }
            guard bytes <= Self.maxCollapseIDBytes else {
                throw MessageValidationError(
                    path.key("collapse-id"), .collapseIDTooLong,
                    "is \(bytes) bytes of UTF-8, more than \(Self.maxCollapseIDBytes)")
            }
        }
        if let topic, topic.isEmpty {
            throw MessageValidationError(path.key("topic"), .invalidValue, "must not be empty")
        }
        if priority == .immediately, pushType.forbidsImmediatePriority {
            throw MessageValidationError(
                path.key("priority"), .priorityNotAllowed, "must not be 10 for \(pushType) pushes; use 5 or 1")
        }
    }

    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONValue(from: decoder), at: FieldPath(codingPath: decoder.codingPath))
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }
}
