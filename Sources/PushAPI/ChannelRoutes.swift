import APNsCore
import Hummingbird
import PushConfiguration
import PushCore
import PushPipeline
import PushStore

/// `/v1/apps/{app}/channels/{environment}…`: the app's Live Activity broadcast channels, created
/// and deleted through Apple's channel management API (``ChannelManager``). A channel id holds
/// base64 characters: its `/` is sent as `%2F` in a path.
enum ChannelRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.post, "/v1/apps/{app}/channels/{environment}", "createChannel", create),
        APIRoute(.get, "/v1/apps/{app}/channels/{environment}", "listChannels", list),
        APIRoute(.get, "/v1/apps/{app}/channels/{environment}/{channel}", "getChannel", channel),
        APIRoute(.delete, "/v1/apps/{app}/channels/{environment}/{channel}", "deleteChannel", delete),
    ]

    static func create(_ call: inout APICall) async throws -> Response {
        let (app, environment) = try appAndEnvironment(call)
        let body = try await call.jsonObject()
        try APIValidation.onlyKeys(body, ["message-storage-policy"])
        let name = try APIValidation.string(body, "message-storage-policy")
        guard let policy = APNsMessageStoragePolicy(name: name) else {
            throw APIError.invalid("message-storage-policy", "must be none or most-recent")
        }
        let record = try await answering { try await call.api.channels.create(app: app, environment: environment, policy: policy) }
        return APIResponse.json(record.jsonValue(environment: environment), status: .created)
    }

    static func list(_ call: inout APICall) async throws -> Response {
        let (app, environment) = try appAndEnvironment(call)
        let records = try await answering { try await call.api.channels.channels(app: app, environment: environment) }
        return APIResponse.json([
            "channels": .array(records.map { $0.jsonValue(environment: environment) }), "limit": JSONValue(APNsChannel.maxPerApp),
        ])
    }

    static func channel(_ call: inout APICall) async throws -> Response {
        let (app, environment) = try appAndEnvironment(call)
        let id = try channelID(call)
        let record = try await answering { try await call.api.channels.channel(app: app, environment: environment, id: id) }
        return APIResponse.json(record.jsonValue(environment: environment))
    }

    static func delete(_ call: inout APICall) async throws -> Response {
        let (app, environment) = try appAndEnvironment(call)
        let id = try channelID(call)
        try await answering { try await call.api.channels.delete(app: app, environment: environment, id: id) }
        return APIResponse.json(["channel": .string(id.rawValue), "environment": .string(environment.rawValue), "removed": true])
    }

    private static func appAndEnvironment(_ call: APICall) throws -> (AppSettings, APNsEnvironment) {
        let app = call.app
        return (app, try APIValidation.environment(try call.parameter("environment"), of: app))
    }

    private static func channelID(_ call: APICall) throws -> APNsChannelID {
        guard let id = APNsChannelID(try call.parameter("channel")) else {
            throw APIError.invalid("channel", "must be a broadcast channel id (base64, 1 to \(APNsChannelID.maxLength) characters; / as %2F)")
        }
        return id
    }

    /// Runs a channel operation, answering its ``ChannelManagerError`` with the status it calls for.
    @discardableResult
    private static func answering<Value>(_ operation: () async throws -> Value) async throws -> Value {
        do {
            return try await operation()
        } catch let error as ChannelManagerError {
            switch error.kind {
            case .unknownChannel: throw APIError.notFound(error.message, field: error.field)
            case .limitReached: throw APIError(.conflict, "channel-limit", error.message)
            case .refused: throw APIError(.badGateway, "apns-refused", error.message)
            case .unreachable: throw APIError(.serviceUnavailable, "apns-unreachable", error.message)
            case .credential: throw APIError(.serviceUnavailable, "credential-unavailable", error.message, field: error.field)
            }
        }
    }
}
