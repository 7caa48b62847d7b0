import APNsCore

extension Audience: Codable {
    static let fieldNames: Set<String> = ["tokens", "openids", "tags", "broadcast", "channel", "activity", "area"]

    /// Decodes the `audience` object: exactly one of its selectors (or `area` with `tags`),
    /// unknown keys rejected.
    /// Token format is checked here (a ``DeviceToken`` cannot hold a bad one); list sizes are
    /// checked by ``validate(at:)``.
    init(json: JSONValue, at path: FieldPath) throws(MessageValidationError) {
        let object = try json.decodeObject(at: path)
        try object.rejectUnknownKeys(Self.fieldNames, at: path)
        guard let kind = object.keys.first else {
            throw MessageValidationError(path, .emptyAudience, "must name one of tokens, openids, tags, broadcast, channel, activity, area")
        }
        if let area = object["area"], object.count == 2, let tags = object["tags"] {
            self = .area(try GeoArea(json: area, at: path.key("area")), tags: try TagExpression(json: tags, at: path.key("tags")))
            return
        }
        guard object.count == 1 else {
            throw MessageValidationError(
                path, .ambiguousAudience,
                "must name exactly one selector (or area with tags), got \(object.keys.joined(separator: ", "))")
        }
        let value = object[kind]!
        let valuePath = path.key(kind)
        switch kind {
        case "tokens":
            var tokens: [DeviceToken] = []
            let elements = try value.decodeArray(at: valuePath)
            tokens.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                let hex = try element.decodeString(at: valuePath.index(index))
                do {
                    tokens.append(try DeviceToken(hex: hex))
                } catch {
                    throw MessageValidationError(valuePath.index(index), .invalidToken, error.description)
                }
            }
            self = .tokens(tokens)
        case "openids":
            self = .openIDs(try value.decodeStringArray(at: valuePath))
        case "tags":
            self = .tags(try TagExpression(json: value, at: valuePath))
        case "channel":
            self = .channel(
                try Self.identifier(
                    value, at: valuePath, APNsChannelID.init,
                    "must be a broadcast channel id (base64, 1 to \(APNsChannelID.maxLength) characters)"))
        case "area":
            self = .area(try GeoArea(json: value, at: valuePath), tags: nil)
        case "activity":
            self = .activity(
                try Self.identifier(
                    value, at: valuePath, LiveActivityID.init,
                    "must be a Live Activity id: 1 to \(LiveActivityID.maxLength) characters of A-Z a-z 0-9 . _ -"))
        default:
            guard let flag = value.boolValue else { throw .type(valuePath, expected: "true", got: value) }
            guard flag else { throw MessageValidationError(valuePath, .invalidValue, "must be true") }
            self = .broadcast
        }
    }

    /// A string `make` accepts, or an error at `path` saying what it must be.
    private static func identifier<Identifier>(
        _ value: JSONValue, at path: FieldPath, _ make: (String) -> Identifier?, _ mustBe: String
    ) throws(MessageValidationError) -> Identifier {
        guard let identifier = make(try value.decodeString(at: path)) else {
            throw MessageValidationError(path, .invalidValue, mustBe)
        }
        return identifier
    }

    /// Decodes and checks an `audience` object on its own (field paths start at `audience`).
    public static func decodeAndValidate(_ json: JSONValue) throws(MessageValidationError) -> Audience {
        let path = FieldPath.root.key("audience")
        let audience = try Audience(json: json, at: path)
        try audience.validate(at: path)
        return audience
    }

    /// The `audience` object.
    public var jsonValue: JSONValue {
        switch self {
        case .tokens(let tokens): ["tokens": .array(tokens.map { .string($0.hex) })]
        case .openIDs(let openIDs): ["openids": .array(openIDs.map(JSONValue.string))]
        case .tags(let expression): ["tags": expression.jsonValue]
        case .broadcast: ["broadcast": true]
        case .channel(let id): ["channel": .string(id.rawValue)]
        case .activity(let id): ["activity": .string(id.rawValue)]
        case .area(let area, let tags):
            if let tags { ["area": area.jsonValue, "tags": tags.jsonValue] } else { ["area": area.jsonValue] }
        }
    }

    /// Checks list sizes and emptiness.
    func validate(at path: FieldPath) throws(MessageValidationError) {
        let valuePath = path.key(kind)
        switch self {
        case .tokens(let tokens):
            guard !tokens.isEmpty else { throw MessageValidationError(valuePath, .emptyAudience, "must not be empty") }
            guard tokens.count <= Self.maxTokens else {
                throw MessageValidationError(
                    valuePath, .tooManyTokens, "has \(tokens.count) tokens, more than \(Self.maxTokens)")
            }
        case .openIDs(let openIDs):
            guard !openIDs.isEmpty else { throw MessageValidationError(valuePath, .emptyAudience, "must not be empty") }
            if let index = openIDs.firstIndex(where: \.isEmpty) {
                throw MessageValidationError(valuePath.index(index), .invalidValue, "openid must not be empty")
            }
        case .tags(let expression):
            try expression.validate(at: valuePath)
        case .area(_, let tags):
            try tags?.validate(at: path.key("tags"))
        case .broadcast, .channel, .activity:
            break
        }
    }

    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONValue(from: decoder), at: FieldPath(codingPath: decoder.codingPath))
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }
}
