import APNsCore
import Hummingbird
import PushConfiguration
import PushCore
import PushStore

/// `/v1/apps/{app}/activities/{environment}/{activity}…`: the update tokens of a running Live
/// Activity, as the app reports them (ActivityKit's `pushTokenUpdates`), kept until they expire.
/// A job with the audience `{"activity": "<id>"}` goes to them.
enum ActivityRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.put, "/v1/apps/{app}/activities/{environment}/{activity}/tokens/{token}", "bindActivityToken", scope: .device, bind),
        APIRoute(.delete, "/v1/apps/{app}/activities/{environment}/{activity}/tokens/{token}", "unbindActivityToken", scope: .device, unbind),
        APIRoute(.get, "/v1/apps/{app}/activities/{environment}/{activity}", "getActivity", activity),
    ]

    static func bind(_ call: inout APICall) async throws -> Response {
        let (app, environment, activity) = try target(call)
        let token = try APIValidation.token(try call.parameter("token"))
        let body = try await call.optionalJSONObject() ?? [:]
        try APIValidation.onlyKeys(body, ["expires-in"])
        var lifetime = ActivityTokenStore.defaultLifetimeMilliseconds
        if let value = body["expires-in"] {
            let maxSeconds = ActivityTokenStore.maxLifetimeMilliseconds / 1000
            guard let seconds = value.intValue, (1...Int(maxSeconds)).contains(seconds) else {
                throw APIError.invalid("expires-in", "must be a whole number of seconds from 1 to \(maxSeconds)")
            }
            lifetime = Int64(seconds) * 1000
        }
        let now = call.api.clock()
        let expiresAt = now + lifetime
        guard
            try await call.api.activityTokens.register(
                app: app.id, environment: environment, activity: activity, token: token, expiresAt: expiresAt, now: now)
        else {
            throw APIError(
                .conflict, "activity-full",
                "activity \(activity) holds \(ActivityTokenStore.maxTokensPerActivity) update tokens; send to that many devices on a broadcast channel",
                field: "activity")
        }
        return APIResponse.json([
            "activity": .string(activity.rawValue), "environment": .string(environment.rawValue), "token": .string(token.hex),
            "expires-at": .number(JSONNumber(Int(expiresAt))),
        ])
    }

    static func unbind(_ call: inout APICall) async throws -> Response {
        let (app, environment, activity) = try target(call)
        let token = try APIValidation.token(try call.parameter("token"))
        guard try await call.api.activityTokens.unregister(app: app.id, environment: environment, activity: activity, token: token) else {
            throw APIError.notFound("token \(token.hex) is not an update token of activity \(activity)", field: "token")
        }
        return APIResponse.json(["activity": .string(activity.rawValue), "token": .string(token.hex), "removed": true])
    }

    static func activity(_ call: inout APICall) async throws -> Response {
        let (app, environment, activity) = try target(call)
        let tokens = try await call.api.activityTokens.tokens(app: app.id, environment: environment, activity: activity, now: call.api.clock())
        return APIResponse.json([
            "activity": .string(activity.rawValue), "environment": .string(environment.rawValue), "tokens": JSONValue(tokens.count),
        ])
    }

    private static func target(_ call: APICall) throws -> (AppSettings, APNsEnvironment, LiveActivityID) {
        let app = call.app
        let environment = try APIValidation.environment(try call.parameter("environment"), of: app)
        guard let activity = LiveActivityID(try call.parameter("activity")) else {
            throw APIError.invalid("activity", "must be a Live Activity id: 1 to \(LiveActivityID.maxLength) characters of A-Z a-z 0-9 . _ -")
        }
        return (app, environment, activity)
    }
}
