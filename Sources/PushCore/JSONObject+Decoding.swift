extension JSONObject {
    /// Throws for the first key, in document order, that is not in `allowed`.
    func rejectUnknownKeys(_ allowed: Set<String>, at path: FieldPath) throws(MessageValidationError) {
        if let unknown = keys.first(where: { !allowed.contains($0) }) {
            let known = allowed.sorted().joined(separator: ", ")
            throw MessageValidationError(path.key(unknown), .unknownField, "is not allowed here (allowed: \(known))")
        }
    }

    /// The value for `key`, or a `missing-field` error naming it.
    func require(_ key: String, at path: FieldPath) throws(MessageValidationError) -> JSONValue {
        guard let value = self[key] else {
            throw MessageValidationError(path.key(key), .missingField, "is required")
        }
        return value
    }
}
