/// Typed reads of a ``JSONValue`` that report failures as ``MessageValidationError``s naming the
/// value's path. Type rules follow JSON Schema: `3.0` is an integer, `true` is not a number.
///
/// A path is built only when it is reported (`@autoclosure`): the elements of a chunk's 1,000
/// tokens and positions are read without writing 2,000 paths such as `positions[417]`.
extension JSONValue {
    func decodeObject(at path: @autoclosure () -> FieldPath) throws(MessageValidationError) -> JSONObject {
        guard let object = objectValue else { throw .type(path(), expected: "an object", got: self) }
        return object
    }

    func decodeArray(at path: @autoclosure () -> FieldPath) throws(MessageValidationError) -> [JSONValue] {
        guard let array = arrayValue else { throw .type(path(), expected: "an array", got: self) }
        return array
    }

    func decodeString(at path: @autoclosure () -> FieldPath) throws(MessageValidationError) -> String {
        guard let string = stringValue else { throw .type(path(), expected: "a string", got: self) }
        return string
    }

    func decodeBool(at path: @autoclosure () -> FieldPath) throws(MessageValidationError) -> Bool {
        guard let bool = boolValue else { throw .type(path(), expected: "true or false", got: self) }
        return bool
    }

    func decodeNumber(at path: @autoclosure () -> FieldPath) throws(MessageValidationError) -> Double {
        guard let number = numberValue else { throw .type(path(), expected: "a number", got: self) }
        return number.doubleValue
    }

    func decodeInt(at path: @autoclosure () -> FieldPath) throws(MessageValidationError) -> Int {
        // Written as an integer (the usual case): no floating-point parse.
        if let number = numberValue, let int = Int(number.text) { return int }
        guard let number = numberValue, number.doubleValue == number.doubleValue.rounded() else {
            throw .type(path(), expected: "an integer", got: self)
        }
        guard let int = number.intValue else {
            throw MessageValidationError(path(), .invalidValue, "integer \(number) is out of range")
        }
        return int
    }

    func decodeStringArray(at path: @autoclosure () -> FieldPath) throws(MessageValidationError) -> [String] {
        var strings: [String] = []
        for (index, element) in try decodeArray(at: path()).enumerated() {
            strings.append(try element.decodeString(at: path().index(index)))
        }
        return strings
    }
}
