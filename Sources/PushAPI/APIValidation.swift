import APNsCore
import PushConfiguration
import PushCore

/// Checks of path parameters and request fields; each throws an ``APIError`` 400 naming the field.
enum APIValidation {
    static let maxTags = 100
    static let maxTextBytes = 128

    /// An environment `app` sends to, by name (field `environment`).
    static func environment(_ name: String, of app: AppSettings) throws -> APNsEnvironment {
        guard let environment = APNsEnvironment(rawValue: name) else {
            throw APIError.invalid("environment", "must be sandbox or production")
        }
        guard app.environments.contains(environment) else {
            throw APIError.invalid("environment", "app \(app.id) does not send to \(environment.rawValue)")
        }
        return environment
    }

    /// A device token: even-length hex (the registry's rule).
    static func token(_ text: String, field: String = "token") throws -> DeviceToken {
        guard text.utf8.count >= 16 else {
            throw APIError.invalid(field, "is not a device token: at least 16 hex digits (8 bytes) are expected", code: "invalid-token")
        }
        do {
            return try DeviceToken(hex: text)
        } catch {
            throw APIError.invalid(field, "is not a device token (\(error))", code: "invalid-token")
        }
    }

    /// A job id: 1–128 characters of `A-Z a-z 0-9 . _ : -`.
    static func jobID(_ text: String, field: String = "job") throws -> String {
        let allowed = text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")
        }
        guard !text.isEmpty, text.utf8.count <= 128, allowed else {
            throw APIError.invalid(field, "a job id is 1 to 128 characters of A-Z a-z 0-9 . _ : -")
        }
        return text
    }

    /// A tag or openid: 1–128 bytes of UTF-8 without control characters.
    static func text(_ text: String, field: String, what: String) throws -> String {
        guard !text.isEmpty, text.utf8.count <= maxTextBytes else {
            throw APIError.invalid(field, "\(what) must be 1 to \(maxTextBytes) bytes of UTF-8")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw APIError.invalid(field, "\(what) must not hold control characters")
        }
        return text
    }

    /// The tags of a request: a list of 0 (or 1, with `nonEmpty`) to ``maxTags`` tags.
    static func tags(_ value: JSONValue, field: String, nonEmpty: Bool) throws -> [String] {
        guard let array = value.arrayValue else {
            throw APIError.invalid(field, "must be a list of tags")
        }
        guard array.count <= maxTags, !nonEmpty || !array.isEmpty else {
            throw APIError.invalid(field, "must list \(nonEmpty ? 1 : 0) to \(maxTags) tags")
        }
        return try array.enumerated().map { index, element in
            guard let tag = element.stringValue else {
                throw APIError.invalid("\(field)[\(index)]", "must be a string")
            }
            return try text(tag, field: "\(field)[\(index)]", what: "a tag")
        }
    }

    /// Refuses keys outside `allowed`, naming the first.
    static func onlyKeys(_ object: JSONObject, _ allowed: Set<String>) throws {
        if let unknown = object.keys.first(where: { !allowed.contains($0) }) {
            throw APIError.invalid(unknown, "is not a known field; expected \(allowed.sorted().joined(separator: ", "))", code: "unknown-field")
        }
    }

    /// A required field's value.
    static func required(_ object: JSONObject, _ key: String) throws -> JSONValue {
        guard let value = object[key] else {
            throw APIError.invalid(key, "is required", code: "missing-field")
        }
        return value
    }

    /// A required string field.
    static func string(_ object: JSONObject, _ key: String) throws -> String {
        guard let string = try required(object, key).stringValue else {
            throw APIError.invalid(key, "must be a string")
        }
        return string
    }

    /// A value safe to echo in a message: at most 64 characters, control characters replaced.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.prefix(64).map { $0.properties.generalCategory == .control ? "?" : $0 }))
    }
}
