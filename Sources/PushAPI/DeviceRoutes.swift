import APNsCore
import Hummingbird
import PushConfiguration
import PushCore
import PushStore

/// `/v1/apps/{app}/devices…` and `/v1/apps/{app}/tags`: the device registry, as a client SDK's
/// server side uses it (bind, unbind, tags, counts).
enum DeviceRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.put, "/v1/apps/{app}/devices/{token}", "bindDevice", scope: .device, bind),
        APIRoute(.delete, "/v1/apps/{app}/devices/{token}", "unbindDevice", scope: .device, unbind),
        APIRoute(.get, "/v1/apps/{app}/devices/{token}", "getDevice", scope: .device, device),
        APIRoute(.post, "/v1/apps/{app}/devices/{token}/restore", "restoreDevice", restore),
        APIRoute(.get, "/v1/apps/{app}/devices/{token}/tags", "getDeviceTags", scope: .device, tags),
        APIRoute(.post, "/v1/apps/{app}/devices/{token}/tags", "addDeviceTags", scope: .device, addTags),
        APIRoute(.delete, "/v1/apps/{app}/devices/{token}/tags/{tag}", "removeDeviceTag", scope: .device, removeTag),
        APIRoute(.get, "/v1/apps/{app}/devices", "countDevices", count),
        APIRoute(.get, "/v1/apps/{app}/tags", "getAppTags", appTags),
    ]

    static func bind(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let token = try APIValidation.token(try call.parameter("token"))
        let body = try await call.jsonObject()
        try APIValidation.onlyKeys(body, ["environment", "openid", "tags"])
        let environmentName = try APIValidation.string(body, "environment")
        guard let environment = APNsEnvironment(rawValue: environmentName) else {
            throw APIError.invalid("environment", "must be sandbox or production")
        }
        guard app.environments.contains(environment) else {
            throw APIError.invalid("environment", "app \(app.id) does not send to \(environment)")
        }
        var openID: String?
        if let value = body["openid"], value != .null {
            guard let text = value.stringValue else { throw APIError.invalid("openid", "must be a string") }
            openID = try APIValidation.text(text, field: "openid", what: "an openid")
        }
        let tags = try body["tags"].map { try APIValidation.tags($0, field: "tags", nonEmpty: false) } ?? []
        try await call.api.registry.bind(app: app.id, token: token, environment: environment, openID: openID, tags: tags)
        guard let record = try await call.api.registry.device(app: app.id, token: token) else {
            throw APIError(.conflict, "conflict", "the device was unbound while it was being bound; bind it again", field: "token")
        }
        return APIResponse.json(deviceJSON(record))
    }

    static func unbind(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let token = try APIValidation.token(try call.parameter("token"))
        guard try await call.api.registry.unbind(app: app.id, token: token) else {
            throw notRegistered(token, app: app.id)
        }
        return APIResponse.json(["token": .string(token.hex), "removed": true])
    }

    static func device(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let token = try APIValidation.token(try call.parameter("token"))
        guard let record = try await call.api.registry.device(app: app.id, token: token) else {
            throw notRegistered(token, app: app.id)
        }
        return APIResponse.json(deviceJSON(record))
    }

    /// `POST …/devices/{token}/restore`: a token kept aside as suspect goes back to its
    /// environment's audiences (an operator judged it valid). 409 when it is not suspect.
    static func restore(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let token = try APIValidation.token(try call.parameter("token"))
        let registry = call.api.registry
        guard try await registry.device(app: app.id, token: token) != nil else {
            throw notRegistered(token, app: app.id)
        }
        guard try await registry.restoreSuspect(app: app.id, token: token) else {
            throw APIError(.conflict, "not-suspect", "device \(token.hex) is not kept aside; nothing to restore", field: "token")
        }
        guard let record = try await registry.device(app: app.id, token: token) else {
            throw notRegistered(token, app: app.id)
        }
        return APIResponse.json(deviceJSON(record))
    }

    static func tags(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let token = try APIValidation.token(try call.parameter("token"))
        let tags = try await registered(token, app: app.id) { try await call.api.registry.tags(app: app.id, token: token) }
        return APIResponse.json(["tags": JSONValue(tags.sorted())])
    }

    static func addTags(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let token = try APIValidation.token(try call.parameter("token"))
        let body = try await call.jsonObject()
        try APIValidation.onlyKeys(body, ["tags"])
        guard let value = body["tags"] else { throw APIError.invalid("tags", "is required", code: "missing-field") }
        let tags = try APIValidation.tags(value, field: "tags", nonEmpty: true)
        let registry = call.api.registry
        let now = try await registered(token, app: app.id) {
            _ = try await registry.addTags(tags, app: app.id, token: token)
            return try await registry.tags(app: app.id, token: token)
        }
        return APIResponse.json(["tags": JSONValue(now.sorted())])
    }

    static func removeTag(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let token = try APIValidation.token(try call.parameter("token"))
        let tag = try APIValidation.text(try call.parameter("tag"), field: "tag", what: "a tag")
        let registry = call.api.registry
        let now = try await registered(token, app: app.id) {
            _ = try await registry.removeTags([tag], app: app.id, token: token)
            return try await registry.tags(app: app.id, token: token)
        }
        return APIResponse.json(["tags": JSONValue(now.sorted())])
    }

    static func count(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let count = try await call.api.registry.deviceCount(app: app.id)
        return APIResponse.json([
            "sandbox": JSONValue(count.sandbox), "production": JSONValue(count.production),
            "suspect": ["sandbox": JSONValue(count.suspectSandbox), "production": JSONValue(count.suspectProduction)],
            "total": JSONValue(count.total),
        ])
    }

    static func appTags(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        return APIResponse.json(["tags": JSONValue(try await call.api.registry.appTags(app: app.id))])
    }

    // MARK: - Helpers

    static func deviceJSON(_ record: DeviceRecord) -> JSONValue {
        [
            "token": .string(record.token.hex), "environment": .string(record.environment.rawValue),
            "openid": record.openID.map { .string($0) } ?? .null, "tags": JSONValue(record.tags.sorted()),
            "registered-at": JSONValue(record.registeredAt),
            "suspect": record.suspicion.map { ["reason": .string($0.reason), "since": JSONValue($0.since)] } ?? .null,
        ]
    }

    private static func notRegistered(_ token: DeviceToken, app: String) -> APIError {
        APIError.notFound("device \(token.hex) is not registered for app \(app)", field: "token")
    }

    /// Runs a registry call, answering 404 when the device is not registered.
    private static func registered<Value>(_ token: DeviceToken, app: String, _ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch let error as StoreError where error.code == .deviceNotRegistered {
            throw notRegistered(token, app: app)
        }
    }
}
