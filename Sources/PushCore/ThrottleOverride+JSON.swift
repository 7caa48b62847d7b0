extension ThrottleOverride: Codable {
    static let fieldNames: Set<String> = ["rate-per-second", "sleep-after", "sleep-ms"]

    /// Decodes the `throttle` object; unknown keys are rejected, ranges are checked by
    /// ``validate(at:)``.
    init(json: JSONValue, at path: FieldPath) throws(MessageValidationError) {
        let object = try json.decodeObject(at: path)
        try object.rejectUnknownKeys(Self.fieldNames, at: path)
        self.init(
            ratePerSecond: try object["rate-per-second"]?.decodeNumber(at: path.key("rate-per-second")),
            sleepAfter: try object["sleep-after"]?.decodeInt(at: path.key("sleep-after")),
            sleepMilliseconds: try object["sleep-ms"]?.decodeInt(at: path.key("sleep-ms"))
        )
    }

    /// The `throttle` object.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        object["rate-per-second"] = ratePerSecond.flatMap { JSONNumber($0) }.map(JSONValue.number)
        object["sleep-after"] = sleepAfter.map { .number(JSONNumber($0)) }
        object["sleep-ms"] = sleepMilliseconds.map { .number(JSONNumber($0)) }
        return .object(object)
    }

    /// Checks the ranges the schema sets.
    func validate(at path: FieldPath) throws(MessageValidationError) {
        if let ratePerSecond, !(ratePerSecond > 0 && ratePerSecond.isFinite) {
            throw MessageValidationError(path.key("rate-per-second"), .invalidValue, "must be greater than 0")
        }
        if let sleepAfter, sleepAfter < 1 {
            throw MessageValidationError(path.key("sleep-after"), .invalidValue, "must be at least 1")
        }
        if let sleepMilliseconds, sleepMilliseconds < 0 {
            throw MessageValidationError(path.key("sleep-ms"), .invalidValue, "must be at least 0")
        }
    }

    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONValue(from: decoder), at: FieldPath(codingPath: decoder.codingPath))
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }
}
