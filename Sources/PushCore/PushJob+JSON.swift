import APNsCore
public import Foundation

extension PushJob: Codable {
    static let fieldNames: Set<String> = [
        "id", "app", "environment", "audience", "notification", "headers", "throttle", "idempotency-key",
        "send-at", "collapse-by-job", "delivery", "name", "recall",
    ]

    /// Decodes a job from parsed JSON, checking its shape: unknown top-level keys, missing
    /// required fields, JSON types, and values the model cannot hold (unknown environment or push
    /// type, a priority other than 10/5/1, a malformed token or date). Everything else is
    /// checked by ``validate()``.
    public init(json: JSONValue) throws(MessageValidationError) {
        try self.init(json: json, at: .root)
    }

    init(json: JSONValue, at path: FieldPath) throws(MessageValidationError) {
        let object = try json.decodeObject(at: path)
        try object.rejectUnknownKeys(Self.fieldNames, at: path)

        let app = try object.require("app", at: path).decodeString(at: path.key("app"))
        let environmentPath = path.key("environment")
        let rawEnvironment = try object.require("environment", at: path).decodeString(at: environmentPath)
        guard let environment = APNsEnvironment(rawValue: rawEnvironment) else {
            throw MessageValidationError(
                environmentPath, .unknownEnvironment, "'\(rawEnvironment)' is not sandbox or production")
        }
        self.init(
            app: app,
            environment: environment,
            audience: try Audience(json: object.require("audience", at: path), at: path.key("audience")),
            notification: try APNsPayload(
                json: object.require("notification", at: path), at: path.key("notification")),
            headers: try PushHeaders(json: object.require("headers", at: path), at: path.key("headers"))
        )
        id = try object["id"]?.decodeString(at: path.key("id"))
        throttle = try object["throttle"].map { value throws(MessageValidationError) in
            try ThrottleOverride(json: value, at: path.key("throttle"))
        }
        idempotencyKey = try object["idempotency-key"]?.decodeString(at: path.key("idempotency-key"))
        if let value = object["send-at"] {
            let sendAtPath = path.key("send-at")
            if value.objectValue != nil {
                sendAtDevice = try DeviceSendTime(json: value, at: sendAtPath)
            } else {
                let text = try value.decodeString(at: sendAtPath)
                guard let date = RFC3339Timestamp.date(from: text) else {
                    throw MessageValidationError(sendAtPath, .invalidValue, "'\(text)' is not an RFC 3339 date-time")
                }
                sendAt = date
            }
        }
        collapseByJob = try object["collapse-by-job"]?.decodeBool(at: path.key("collapse-by-job")) ?? true
        if let value = object["delivery"] {
            let deliveryPath = path.key("delivery")
            let text = try value.decodeString(at: deliveryPath)
            guard let route = DeliveryRoute(rawValue: text) else {
                throw MessageValidationError(deliveryPath, .invalidValue, "'\(text)' is not \(DeliveryRoute.names)")
            }
            delivery = route
        }
        name = try object["name"]?.decodeString(at: path.key("name"))
        recall = try object["recall"].map { value throws(MessageValidationError) in try JobRecall(json: value, at: path.key("recall")) }
    }

    /// The job as JSON, keys in schema order, optional fields left out when absent. `send-at`
    /// is written in UTC to the millisecond.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        object["id"] = id.map(JSONValue.string)
        object["app"] = .string(app)
        object["environment"] = .string(environment.rawValue)
        object["audience"] = audience.jsonValue
        object["notification"] = notification.jsonValue
        object["headers"] = headers.jsonValue
        object["throttle"] = throttle?.jsonValue
        object["idempotency-key"] = idempotencyKey.map(JSONValue.string)
        object["send-at"] = sendAt.map { .string(RFC3339Timestamp.string(from: $0)) } ?? sendAtDevice?.jsonValue
        object["collapse-by-job"] = collapseByJob ? nil : .bool(false)
        object["delivery"] = delivery == .apns ? nil : .string(delivery.rawValue)
        object["name"] = name.map(JSONValue.string)
        object["recall"] = recall?.jsonValue
        return .object(object)
    }

    /// The job as compact JSON, the form published to `push.jobs`.
    public func jsonData() -> Data {
        jsonValue.compactData()
    }

    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONValue(from: decoder), at: FieldPath(codingPath: decoder.codingPath))
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }
}
