public import Foundation

extension DeliveryChunk {
    /// The chunk as compact JSON: the job's JSON with `chunk` and `positions` added, and `tags`
    /// when the job addressed tags.
    public func jsonData() -> Data {
        guard case .object(var object) = job.jsonValue else {
            preconditionFailure("a job encodes as an object")
        }
        object["chunk"] = .string(chunkID)
        object["positions"] = .array(positions.map { .number(JSONNumber(Int($0))) })
        if !addressedTags.isEmpty {
            object["tags"] = .array(addressedTags.map(JSONValue.string))
        }
        return JSONValue.object(object).compactData()
    }

    /// Parses and validates a chunk: the job rules of ``PushJob/validate()``, plus an `id`, a
    /// `chunk` id, a token audience of at most ``maxTokens``, one position (0 ... 2³² − 1)
    /// per token, and `tags` (optional) a list of non-empty strings.
    public static func decodeAndValidate(from data: Data) throws(MessageValidationError) -> DeliveryChunk {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: data)
        } catch {
            throw MessageValidationError(FieldPath.root, .malformedJSON, error.description)
        }
        var object = try json.decodeObject(at: .root)
        let chunkID = try object.require("chunk", at: .root).decodeString(at: FieldPath.root.key("chunk"))
        guard (1...PushJob.maxIdentifierLength).contains(chunkID.unicodeScalars.count) else {
            throw MessageValidationError(FieldPath.root.key("chunk"), .invalidValue, "must be 1 to \(PushJob.maxIdentifierLength) characters")
        }
        object["chunk"] = nil
        let positionsPath = FieldPath.root.key("positions")
        let values = try object.require("positions", at: .root).decodeArray(at: positionsPath)
        var positions: [UInt32] = []
        positions.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            guard let position = UInt32(exactly: try value.decodeInt(at: positionsPath.index(index))) else {
                throw MessageValidationError(positionsPath.index(index), .invalidValue, "must be 0 to \(UInt32.max)")
            }
            positions.append(position)
        }
        object["positions"] = nil
        let tagsPath = FieldPath.root.key("tags")
        let addressedTags = try object["tags"]?.decodeStringArray(at: tagsPath) ?? []
        if let index = addressedTags.firstIndex(where: \.isEmpty) {
            throw MessageValidationError(tagsPath.index(index), .invalidValue, "tag must not be empty")
        }
        object["tags"] = nil
        let job = try PushJob(json: .object(object))
        try job.validate(inChunk: true)
        guard job.id != nil else {
            throw MessageValidationError(FieldPath.root.key("id"), .missingField, "is required on a delivery chunk")
        }
        guard case .tokens(let tokens) = job.audience else {
            throw MessageValidationError(
                FieldPath.root.key("audience"), .invalidValue, "must list tokens on a delivery chunk, is \(job.audience.kind)")
        }
        guard tokens.count <= maxTokens else {
            throw MessageValidationError(
                FieldPath.root.key("audience").key("tokens"), .tooManyTokens, "has \(tokens.count) tokens, a chunk holds at most \(maxTokens)")
        }
        guard positions.count == tokens.count else {
            throw MessageValidationError(positionsPath, .invalidValue, "has \(positions.count) positions for \(tokens.count) tokens")
        }
        return DeliveryChunk(job: job, chunkID: chunkID, tokens: tokens, positions: positions, addressedTags: addressedTags)
    }
}
