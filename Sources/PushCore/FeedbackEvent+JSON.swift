public import APNsCore
public import Foundation

extension FeedbackEvent {
    static let fieldNames: Set<String> = ["app", "token", "environment", "reason", "invalid-since", "job-id", "kind"]

    /// The event as compact JSON.
    public func jsonData() -> Data {
        var object = JSONObject()
        object["app"] = .string(app)
        object["token"] = .string(token.hex)
        object["environment"] = .string(environment.rawValue)
        object["reason"] = .string(reason)
        object["invalid-since"] = .number(JSONNumber(Int(invalidSince)))
        object["job-id"] = jobID.map(JSONValue.string)
        if kind != .device {
            object["kind"] = .string(kind.description)
        }
        return JSONValue.object(object).compactData()
    }

    /// Parses an event, naming the field at fault.
    public static func decode(from data: Data) throws(MessageValidationError) -> FeedbackEvent {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: data)
        } catch {
            throw MessageValidationError(FieldPath.root, .malformedJSON, error.description)
        }
        let root = FieldPath.root
        let object = try json.decodeObject(at: root)
        try object.rejectUnknownKeys(fieldNames, at: root)
        let app = try object.require("app", at: root).decodeString(at: root.key("app"))
        let hex = try object.require("token", at: root).decodeString(at: root.key("token"))
        let token: DeviceToken
        do {
            token = try DeviceToken(hex: hex)
        } catch {
            throw MessageValidationError(root.key("token"), .invalidToken, error.description)
        }
        let rawEnvironment = try object.require("environment", at: root).decodeString(at: root.key("environment"))
        guard let environment = APNsEnvironment(rawValue: rawEnvironment) else {
            throw MessageValidationError(root.key("environment"), .unknownEnvironment, "'\(rawEnvironment)' is not sandbox or production")
        }
        var kind = TokenKind.device
        if let value = object["kind"] {
            let text = try value.decodeString(at: root.key("kind"))
            guard let parsed = TokenKind(text) else {
                throw MessageValidationError(root.key("kind"), .invalidValue, "'\(text)' is not device, voip or push-to-start:<AttributesType>")
            }
            kind = parsed
        }
        return FeedbackEvent(
            app: app,
            token: token,
            environment: environment,
            reason: try object.require("reason", at: root).decodeString(at: root.key("reason")),
            invalidSince: Int64(try object.require("invalid-since", at: root).decodeInt(at: root.key("invalid-since"))),
            jobID: try object["job-id"]?.decodeString(at: root.key("job-id")),
            kind: kind
        )
    }
}
