import APNsCore
import Hummingbird
import NIOCore
import PushConfiguration
import PushCore
import PushStore

/// `/v1/apps/{app}/devices…`, `/v1/apps/{app}/users…` and `/v1/apps/{app}/tags…`: the device
/// registry, as a client SDK's server side uses it (bind, unbind, tags, counts, a user's device
/// and logout) and as an operator does (a tag removed everywhere, every device exported).
enum DeviceRoutes {
    static let routes: [APIRoute] = [
        // Before `devices/{token}`: the first route whose path matches answers.
        APIRoute(.get, "/v1/apps/{app}/devices/export", "exportDevices", export),
        APIRoute(.put, "/v1/apps/{app}/devices/{token}", "bindDevice", scope: .device, bind),
        APIRoute(.delete, "/v1/apps/{app}/devices/{token}", "unbindDevice", scope: .device, unbind),
        APIRoute(.get, "/v1/apps/{app}/devices/{token}", "getDevice", scope: .device, device),
        APIRoute(.post, "/v1/apps/{app}/devices/{token}/restore", "restoreDevice", restore),
        APIRoute(.get, "/v1/apps/{app}/devices/{token}/campaigns", "getDeviceCampaigns", campaigns),
        APIRoute(.get, "/v1/apps/{app}/devices/{token}/badge", "getDeviceBadge", scope: .device, badge),
        APIRoute(.put, "/v1/apps/{app}/devices/{token}/badge", "setDeviceBadge", scope: .device, setBadge),
        APIRoute(.get, "/v1/apps/{app}/devices/{token}/location", "getDeviceLocation", scope: .device, location),
        APIRoute(.put, "/v1/apps/{app}/devices/{token}/location", "setDeviceLocation", scope: .device, setLocation),
        APIRoute(.delete, "/v1/apps/{app}/devices/{token}/location", "forgetDeviceLocation", scope: .device, forgetLocation),
        APIRoute(.get, "/v1/apps/{app}/devices/{token}/tags", "getDeviceTags", scope: .device, tags),
        APIRoute(.post, "/v1/apps/{app}/devices/{token}/tags", "addDeviceTags", scope: .device, addTags),
        APIRoute(.delete, "/v1/apps/{app}/devices/{token}/tags/{tag}", "removeDeviceTag", scope: .device, removeTag),
        APIRoute(.get, "/v1/apps/{app}/devices", "countDevices", count),
        APIRoute(.get, "/v1/apps/{app}/users/{openid}", "getUser", user),
        APIRoute(.delete, "/v1/apps/{app}/users/{openid}", "logOutUser", scope: .device, logOut),
        APIRoute(.get, "/v1/apps/{app}/tags", "getAppTags", appTags),
        APIRoute(.delete, "/v1/apps/{app}/tags/{tag}", "removeAppTag", removeAppTag),
        // The other token kinds (VoIP, push-to-start per attributes type): a registry each.
        APIRoute(.put, "/v1/apps/{app}/tokens/{kind}/{token}", "bindToken", scope: .device, bind),
        APIRoute(.delete, "/v1/apps/{app}/tokens/{kind}/{token}", "unbindToken", scope: .device, unbind),
        APIRoute(.get, "/v1/apps/{app}/tokens/{kind}/{token}", "getToken", scope: .device, device),
        APIRoute(.get, "/v1/apps/{app}/tokens/{kind}", "countTokens", count),
    ]

    /// The registry a route works on: the app's own (its device tokens), or, on
    /// `/tokens/{kind}/…`, the registry of that token kind (``TokenKind/registry(of:)``).
    private static func registry(_ call: APICall, of app: AppSettings) throws -> String {
        guard call.parameters["kind"] != nil else { return app.id }
        let text = try call.parameter("kind")
        guard let kind = TokenKind(text) else {
            throw APIError.invalid("kind", "must be device, voip or push-to-start:<ActivityAttributes type>")
        }
        return kind.registry(of: app.id)
    }

    static func bind(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        let body = try await call.jsonObject()
        try APIValidation.onlyKeys(body, ["environment", "openid", "tags", "time-zone"])
        let environment = try APIValidation.environment(try APIValidation.string(body, "environment"), of: app)
        var openID: String?
        if let value = body["openid"], value != .null {
            guard let text = value.stringValue else { throw APIError.invalid("openid", "must be a string") }
            openID = try APIValidation.text(text, field: "openid", what: "an openid")
        }
        let tags = try body["tags"].map { try APIValidation.tags($0, field: "tags", nonEmpty: false) } ?? []
        var timeZone: String?
        if let value = body["time-zone"], value != .null {
            guard let name = value.stringValue else { throw APIError.invalid("time-zone", "must be a string: an IANA time zone name") }
            if let problem = TimeZoneName.problem(name) { throw APIError.invalid("time-zone", problem) }
            timeZone = name
        }
        let registryApp = try registry(call, of: app)
        try await call.api.registry.bind(
            app: registryApp, token: token, environment: environment, openID: openID, tags: tags, timeZone: timeZone)
        guard let record = try await call.api.registry.device(app: registryApp, token: token) else {
            throw APIError(.conflict, "conflict", "the device was unbound while it was being bound; bind it again", field: "token")
        }
        return try await deviceJSON(record, registry: registryApp, call.api)
    }

    /// A device as the API answers it: its record, its time zone and its receipt hours.
    private static func deviceJSON(_ record: DeviceRecord, registry: String, _ api: APIEnvironment) async throws -> Response {
        APIResponse.json(record.jsonValue(with: try await api.registry.deviceTime(app: registry, token: record.token)))
    }

    static func unbind(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        guard try await call.api.registry.unbind(app: try registry(call, of: app), token: token) else {
            throw notRegistered(token, app: app.id)
        }
        return APIResponse.json(["token": .string(token.hex), "removed": true])
    }

    static func device(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        let registryApp = try registry(call, of: app)
        guard let record = try await call.api.registry.device(app: registryApp, token: token) else {
            throw notRegistered(token, app: app.id)
        }
        return try await deviceJSON(record, registry: registryApp, call.api)
    }

    /// `POST …/devices/{token}/restore`: a token kept aside as suspect goes back to its
    /// environment's audiences (an operator judged it valid). 409 when it is not suspect.
    static func restore(_ call: inout APICall) async throws -> Response {
        let app = call.app
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
        return try await deviceJSON(record, registry: app.id, call.api)
    }

    /// `GET …/devices/{token}/badge`: the badge the server keeps for the device (0 until a
    /// campaign with a badge rule counts one).
    static func badge(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        let device = try await deviceID(token, app: app.id, call.api.registry)
        let badge = try await call.api.badges.badge(app: app.id, device: device)
        return APIResponse.json(["token": .string(token.hex), "badge": JSONValue(badge)])
    }

    /// `PUT …/devices/{token}/badge` with `{"badge": N}`: sets the badge the server keeps for
    /// the device, as the app does when it is opened (`{"badge": 0}`); the next campaign with a
    /// badge rule counts from it.
    static func setBadge(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        let body = try await call.jsonObject()
        try APIValidation.onlyKeys(body, ["badge"])
        let value = try APIValidation.required(body, "badge")
        guard let badge = value.intValue, BadgeRule.numbers.contains(badge) else {
            throw APIError.invalid("badge", "must be an integer from 0 to \(BadgeRule.maxValue)")
        }
        let device = try await deviceID(token, app: app.id, call.api.registry)
        try await call.api.badges.set(app: app.id, device: device, to: badge)
        return APIResponse.json(["token": .string(token.hex), "badge": JSONValue(badge)])
    }

    /// `GET …/devices/{token}/location`: where the device last said it was, as stored (coarsened),
    /// and when that expires; 404 when it has no location (never reported, forgotten, expired).
    static func location(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        guard let location = try await call.api.registry.location(app: app.id, token: token) else {
            throw APIError.notFound("device \(token.hex) of app \(app.id) has no location", field: "token")
        }
        return APIResponse.json(location.jsonValue(token: token))
    }

    /// `PUT …/devices/{token}/location` with `{"lat": …, "lon": …}`: records where a registered
    /// device is, coarsened to `registry.location-precision-km`, for `registry.location-ttl-days`.
    static func setLocation(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        let body = try await call.jsonObject()
        try APIValidation.onlyKeys(body, ["lat", "lon"])
        func degrees(_ key: String) throws -> Double {
            guard let number = try APIValidation.required(body, key).numberValue?.doubleValue else {
                throw APIError.invalid(key, "must be a number of degrees")
            }
            return number
        }
        let (latitude, longitude) = (try degrees("lat"), try degrees("lon"))
        if let problem = GeoPoint.check(latitude: latitude, longitude: longitude) {
            throw APIError.invalid(problem.field, problem.message)
        }
        let location = try await registered(token, app: app.id) {
            try await call.api.registry.setLocation(app: app.id, token: token, GeoPoint(latitude: latitude, longitude: longitude))
        }
        return APIResponse.json(location.jsonValue(token: token))
    }

    /// `DELETE …/devices/{token}/location`: forgets where the device is.
    static func forgetLocation(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        let forgotten = try await call.api.registry.forgetLocation(app: app.id, token: token)
        return APIResponse.json(["token": .string(token.hex), "forgotten": .bool(forgotten)])
    }

    /// The id of a registered device of `app`: what its badge is kept by.
    private static func deviceID(_ token: DeviceToken, app: String, _ registry: DeviceRegistry) async throws -> UInt32 {
        guard let id = try await registry.deviceIDs(app: app, tokens: [token])[0] else {
            throw notRegistered(token, app: app)
        }
        return id
    }

    static func tags(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        let tags = try await registered(token, app: app.id) { try await call.api.registry.tags(app: app.id, token: token) }
        return APIResponse.json(["tags": JSONValue(tags.sorted())])
    }

    static func addTags(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        let body = try await call.jsonObject()
        try APIValidation.onlyKeys(body, ["tags"])
        let value = try APIValidation.required(body, "tags")
        let tags = try APIValidation.tags(value, field: "tags", nonEmpty: true)
        let registry = call.api.registry
        let now = try await registered(token, app: app.id) {
            _ = try await registry.addTags(tags, app: app.id, token: token)
            return try await registry.tags(app: app.id, token: token)
        }
        return APIResponse.json(["tags": JSONValue(now.sorted())])
    }

    static func removeTag(_ call: inout APICall) async throws -> Response {
        let app = call.app
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
        let app = call.app
        let count = try await call.api.registry.deviceCount(app: try registry(call, of: app))
        return APIResponse.json([
            "sandbox": JSONValue(count.sandbox), "production": JSONValue(count.production),
            "suspect": ["sandbox": JSONValue(count.suspectSandbox), "production": JSONValue(count.suspectProduction)],
            "total": JSONValue(count.total),
        ])
    }

    /// `GET …/devices/export`: every device of the app, one JSON line each (as `getDevice`
    /// answers, and as `pushfleet devices import` reads), streamed shard by shard. A failure
    /// after the first line ends the stream without its last chunk, so no client takes a cut
    /// export for a whole one.
    static func export(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let registry = call.api.registry
        // Redis answers before the 200 goes out: an outage is a 503, not an empty export.
        _ = try await registry.layout(app: app.id)
        let body = ResponseBody { writer in
            try await registry.forEachExportLine(app: app.id) { page in
                var lines = ByteBuffer()
                for line in page {
                    lines.writeBytes(line.compactData())
                    lines.writeInteger(UInt8(ascii: "\n"))
                }
                try await writer.write(lines)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: body)
    }

    /// `GET …/users/{openid}`: the device the user is logged in on.
    static func user(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let openID = try APIValidation.text(try call.parameter("openid"), field: "openid", what: "an openid")
        guard let record = try await call.api.registry.user(app: app.id, openID: openID) else {
            throw notLoggedIn(openID, app: app.id)
        }
        return try await deviceJSON(record, registry: app.id, call.api)
    }

    /// `DELETE …/users/{openid}`: logs the user out; the device stays registered with its tags.
    static func logOut(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let openID = try APIValidation.text(try call.parameter("openid"), field: "openid", what: "an openid")
        guard let token = try await call.api.registry.logOut(app: app.id, openID: openID) else {
            throw notLoggedIn(openID, app: app.id)
        }
        return APIResponse.json(["openid": .string(openID), "token": .string(token.hex), "logged-out": true])
    }

    /// `DELETE …/tags/{tag}`: removes the tag from every device of the app that carries it.
    static func removeAppTag(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let tag = try APIValidation.text(try call.parameter("tag"), field: "tag", what: "a tag")
        let removed = try await call.api.registry.removeTagFromEveryDevice(app: app.id, tag: tag)
        return APIResponse.json(["tag": .string(tag), "devices": JSONValue(removed)])
    }

    static func appTags(_ call: inout APICall) async throws -> Response {
        let app = call.app
        return APIResponse.json(["tags": JSONValue(try await call.api.registry.appTags(app: app.id))])
    }

    // MARK: - Helpers

    private static func notLoggedIn(_ openID: String, app: String) -> APIError {
        APIError.notFound("openid \(openID) is logged in on no device of app \(app)", field: "openid")
    }

    static func notRegistered(_ token: DeviceToken, app: String) -> APIError {
        APIError.notFound("device \(token.hex) is not registered for app \(app)", field: "token")
    }

    /// `GET …/devices/{token}/campaigns?limit=N`: of the app's `N` newest jobs (default 50, at
    /// most ``JobListRoutes/maxLimit``), those the device confirmed with receipts (`delivered`,
    /// `opened`), newest first, each with its name (null without one). The only record of which
    /// campaigns reached a device is its receipts: a job's sent state is kept by position, not by
    /// token.
    static func campaigns(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let token = try APIValidation.token(try call.parameter("token"))
        let limit = try call.limit(default: 50, max: JobListRoutes.maxLimit)
        let listed = try await call.api.jobs.index.recent(app: app.id, limit: limit)
        let jobs = call.api.jobs
        let receipts = try await jobs.receipts(of: token, jobIDs: listed.map(\.jobID))
        let confirmed = listed.filter { receipts[$0.jobID] != nil }
        let names = try await jobs.names(jobIDs: confirmed.map(\.jobID))
        var campaigns: [JSONValue] = []
        for (jobID, at) in confirmed {
            guard let events = receipts[jobID] else { continue }
            campaigns.append([
                "job": .string(jobID), "name": names[jobID].map(JSONValue.string) ?? .null, "listed-at": .number(JSONNumber(Int(at))),
                "events": .array(ReceiptEvent.allCases.filter(events.contains).map { .string($0.rawValue) }),
            ])
        }
        return APIResponse.json(["token": .string(token.hex), "campaigns": .array(campaigns)])
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
