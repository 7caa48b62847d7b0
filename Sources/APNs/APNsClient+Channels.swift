import APNsCore
import Foundation
import NIOCore
import NIOHPACK
import Synchronization

/// A Live Activity broadcast (iOS 18): one request that APNs delivers to every device
/// subscribed to a channel (`POST /4/broadcasts/apps/<bundle id>`).
public struct APNsBroadcastRequest: Sendable {
    public var credential: APNsCredential
    public var environment: APNsEnvironment
    /// The app's bundle id; the request's path names it (broadcasts carry no `apns-topic`).
    public var bundleID: String
    public var channelID: APNsChannelID
    /// The `apns-priority`; `nil` leaves APNs's default (10).
    public var priority: APNsPriority?
    /// The `apns-expiration` in seconds since 1970; it must be 0 on a channel that stores no
    /// message. `nil` omits it.
    public var expiration: Int64?
    /// The `apns-request-id`; generated when `nil`, and kept for every retry.
    public var requestID: APNsID?
    /// The JSON payload (a Live Activity update: `aps.event`, `aps.content-state`, `aps.timestamp`).
    public var payload: ByteBuffer

    public init(
        credential: APNsCredential, environment: APNsEnvironment, bundleID: String, channelID: APNsChannelID,
        priority: APNsPriority? = nil, expiration: Int64? = nil, requestID: APNsID? = nil, payload: ByteBuffer
    ) {
        self.credential = credential
        self.environment = environment
        self.bundleID = bundleID
        self.channelID = channelID
        self.priority = priority
        self.expiration = expiration
        self.requestID = requestID
        self.payload = payload
    }
}

/// A request to Apple's channel management API.
public enum APNsChannelOperation: Sendable, Hashable {
    /// `POST /1/apps/<bundle>/channels`: a new channel; its id comes in `apns-channel-id`.
    case create(APNsMessageStoragePolicy)
    /// `GET /1/apps/<bundle>/channels` with `apns-channel-id`: the channel's policy.
    case read(APNsChannelID)
    /// `DELETE /1/apps/<bundle>/channels` with `apns-channel-id`.
    case delete(APNsChannelID)
    /// `GET /1/apps/<bundle>/all-channels`: every channel id of the app in the environment.
    case list
}

/// The channel management API's answer to one ``APNsChannelOperation``.
public struct APNsChannelAnswer: Sendable, Hashable {
    /// The status, reason, `apns-request-id` and `apns-channel-id`.
    public var response: APNsResponse
    /// The channel created (create) or read (read); `nil` otherwise or on a refusal.
    public var channel: APNsChannel?
    /// The channels listed (list); empty otherwise.
    public var channelIDs: [APNsChannelID]

    public var isSuccess: Bool { response.isSuccess }
}

extension APNsClient {
    /// Sends one broadcast on a channel, with the retries ``send(_:)`` makes (``APNsAttempts``).
    public func broadcast(_ request: APNsBroadcastRequest) async throws(APNsError) -> APNsResponse {
        let requestID = (request.requestID ?? apnsIDs.withLock { APNsID.random(using: &$0) }).uuidString
        return try await sendOne(credential: request.credential, environment: request.environment, service: .push, payload: request.payload) {
            Self.broadcastHeaders(for: request, requestID: requestID, authority: $0, providerToken: $1)
        }
    }

    /// Sends one request to the channel management API of `environment` for the app
    /// `bundleID`, on connections of their own (``APNsService/channelManagement``).
    ///
    /// - Throws: ``APNsError`` when there is no answer; a refusal is an answer
    ///   (``APNsChannelAnswer/response``).
    public func manageChannels(
        _ operation: APNsChannelOperation, bundleID: String, credential: APNsCredential, environment: APNsEnvironment,
        requestID: APNsID? = nil
    ) async throws(APNsError) -> APNsChannelAnswer {
        let requestID = (requestID ?? apnsIDs.withLock { APNsID.random(using: &$0) }).uuidString
        var payload = ByteBuffer()
        if case .create(let policy) = operation {
            payload = ByteBuffer(string: #"{"message-storage-policy":\#(policy.rawValue),"push-type":"LiveActivity"}"#)
        }
        let response = try await sendOne(credential: credential, environment: environment, service: .channelManagement, payload: payload) {
            Self.managementHeaders(for: operation, bundleID: bundleID, requestID: requestID, authority: $0, providerToken: $1)
        }
        return Self.channelAnswer(to: operation, response: response)
    }

    /// The header list of a broadcast.
    package static func broadcastHeaders(
        for request: APNsBroadcastRequest, requestID: String, authority: String, providerToken: APNsProviderToken?
    ) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":path", value: "/4/broadcasts/apps/" + request.bundleID)
        headers.add(name: ":authority", value: authority)
        if let providerToken {
            headers.add(name: "authorization", value: providerToken.authorization)
        }
        headers.add(name: "apns-channel-id", value: request.channelID.rawValue, indexing: .nonIndexable)
        headers.add(name: "apns-push-type", value: APNsPushType.liveactivity.rawValue)
        if let priority = request.priority {
            headers.add(name: "apns-priority", value: priority.description)
        }
        if let expiration = request.expiration {
            headers.add(name: "apns-expiration", value: String(expiration), indexing: .nonIndexable)
        }
        headers.add(name: "apns-request-id", value: requestID, indexing: .nonIndexable)
        return headers
    }

    /// The header list of a channel management request.
    package static func managementHeaders(
        for operation: APNsChannelOperation, bundleID: String, requestID: String, authority: String,
        providerToken: APNsProviderToken?
    ) -> HPACKHeaders {
        let method: String
        var path = "/1/apps/" + bundleID + "/channels"
        var channelID: APNsChannelID?
        switch operation {
        case .create: method = "POST"
        case .read(let id):
            method = "GET"
            channelID = id
        case .delete(let id):
            method = "DELETE"
            channelID = id
        case .list:
            method = "GET"
            path = "/1/apps/" + bundleID + "/all-channels"
        }
        var headers = HPACKHeaders()
        headers.add(name: ":method", value: method)
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":path", value: path)
        headers.add(name: ":authority", value: authority)
        if let providerToken {
            headers.add(name: "authorization", value: providerToken.authorization)
        }
        if case .create = operation {
            headers.add(name: "content-type", value: "application/json")
        }
        if let channelID {
            headers.add(name: "apns-channel-id", value: channelID.rawValue, indexing: .nonIndexable)
        }
        headers.add(name: "apns-request-id", value: requestID, indexing: .nonIndexable)
        return headers
    }

    private struct ChannelBody: Decodable {
        var policy: Int?
        var channels: [String]?

        enum CodingKeys: String, CodingKey {
            case policy = "message-storage-policy"
            case channels
        }
    }

    /// Reads what a management answer carries for `operation`. A successful answer without
    /// what it should carry (a create without `apns-channel-id`, a read without a policy) is
    /// given as a 502 with reason `MalformedAnswer`: the channel's state is not known.
    package static func channelAnswer(to operation: APNsChannelOperation, response: APNsResponse) -> APNsChannelAnswer {
        var answer = APNsChannelAnswer(response: response, channel: nil, channelIDs: [])
        guard response.isSuccess else { return answer }
        let body = response.body.flatMap { try? JSONDecoder().decode(ChannelBody.self, from: Data($0.readableBytesView)) }
        switch operation {
        case .create(let policy):
            if let id = response.channelID.flatMap(APNsChannelID.init) {
                answer.channel = APNsChannel(id: id, messageStoragePolicy: policy)
            }
        case .read(let id):
            if let policy = body?.policy.flatMap(APNsMessageStoragePolicy.init(rawValue:)) {
                answer.channel = APNsChannel(id: id, messageStoragePolicy: policy)
            }
        case .delete:
            return answer
        case .list:
            if let channels = body?.channels {
                let ids = channels.compactMap(APNsChannelID.init)
                if ids.count == channels.count {
                    answer.channelIDs = ids
                    return answer
                }
            }
        }
        if answer.channel == nil {
            var malformed = APNsResponse(
                status: 502, apnsID: nil, reason: .unknown("MalformedAnswer"), timestamp: nil, attempts: response.attempts)
            malformed.requestID = response.requestID
            answer.response = malformed
        }
        return answer
    }
}
