extension TagExpression: Codable {
    static let fieldNames: Set<String> = ["all", "any", "none"]

    /// Decodes the `tags` object; unknown keys are rejected, emptiness is checked by
    /// ``validate(at:)``.
    init(json: JSONValue, at path: FieldPath) throws(MessageValidationError) {
        let object = try json.decodeObject(at: path)
        try object.rejectUnknownKeys(Self.fieldNames, at: path)
        self.init(
            all: try object["all"]?.decodeStringArray(at: path.key("all")) ?? [],
            any: try object["any"]?.decodeStringArray(at: path.key("any")) ?? [],
            none: try object["none"]?.decodeStringArray(at: path.key("none")) ?? []
        )
    }

    /// The `tags` object; empty lists are left out.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        for (key, tags) in [("all", all), ("any", any), ("none", none)] where !tags.isEmpty {
            object[key] = .array(tags.map(JSONValue.string))
        }
        return .object(object)
    }

    /// Checks that the expression selects something and that no tag is empty.
    func validate(at path: FieldPath) throws(MessageValidationError) {
        guard !all.isEmpty || !any.isEmpty else {
            throw MessageValidationError(path, .emptyTagExpression, "needs a non-empty 'all' or 'any'")
        }
        for (key, tags) in [("all", all), ("any", any), ("none", none)] {
            if let index = tags.firstIndex(where: \.isEmpty) {
                throw MessageValidationError(path.key(key).index(index), .invalidValue, "tag must not be empty")
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONValue(from: decoder), at: FieldPath(codingPath: decoder.codingPath))
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }
}
