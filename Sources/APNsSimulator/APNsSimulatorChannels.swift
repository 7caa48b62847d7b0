import APNsCore
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK

/// Apple's Live Activity broadcast channels as the simulator serves them: the channel
/// management API (`/1/apps/<bundle>/channels`, `/1/apps/<bundle>/all-channels`) and the
/// broadcast endpoint (`/4/broadcasts/apps/<bundle>`), with Apple's checks and reasons.
///
/// Channels are kept per bundle id for the simulator's environment, at most
/// ``APNsSimulatorConfiguration/maxChannelsPerApp`` each (Apple's 10,000); broadcasts accepted
/// are counted per channel id (``APNsSimulatorCounters/broadcasts``).
final class APNsSimulatorChannels: Sendable {
    /// What the simulator answers a channel request.
    struct Answer {
        var status: Int
        /// The answer's headers besides `:status` (`apns-request-id`, `apns-channel-id`).
        var headers: [(String, String)]
        /// A JSON body: the reason of a refusal, or what a read or list returns.
        var body: String?
        var reason: APNsReason?

        static func refused(_ reason: APNsReason, requestID: String) -> Answer {
            Answer(
                status: reason.documentedStatus ?? 400, headers: [("apns-request-id", requestID)],
                body: #"{"reason":"\#(reason.rawValue)"}"#, reason: reason)
        }
    }

    private struct State {
        /// Channel id → storage policy, per bundle id.
        var channels: [String: [String: APNsMessageStoragePolicy]] = [:]
        var broadcasts: [String: Int] = [:]
    }

    static let managementPrefix = "/1/apps/"
    static let broadcastPrefix = "/4/broadcasts/apps/"
    /// The simulator's name for a create body without a storage policy of 0 or 1; Apple's
    /// documentation names no reason for it.
    static let badStoragePolicy = APNsReason.unknown("BadMessageStoragePolicy")

    let maxPerApp: Int
    let disabledBundleIDs: Set<String>
    private let state = NIOLockedValueBox(State())

    init(maxPerApp: Int, disabledBundleIDs: Set<String>) {
        self.maxPerApp = maxPerApp
        self.disabledBundleIDs = disabledBundleIDs
    }

    /// Whether a request path is one of the channel endpoints.
    static func serves(path: String) -> Bool {
        path.hasPrefix(managementPrefix) || path.hasPrefix(broadcastPrefix)
    }

    /// Channels held, over all bundle ids.
    var count: Int { state.withLockedValue { $0.channels.values.reduce(0) { $0 + $1.count } } }
    /// Broadcasts accepted per channel id.
    var broadcasts: [String: Int] { state.withLockedValue { $0.broadcasts } }

    func resetBroadcasts() {
        state.withLockedValue { $0.broadcasts = [:] }
    }

    private enum Operation {
        case create, read, delete, list, broadcast
    }

    /// Answers one complete request; `authenticate` checks its credential (the same rule as a
    /// device request) and returns the certificate's topic when a certificate authenticated it.
    func handle(
        headers: HPACKHeaders, body: ByteBuffer, validator: APNsSimulatorRequestValidator,
        authenticate: () -> Result<String?, APNsSimulatorRequestValidator.Rejection>
    ) -> Answer {
        let requestID = headers.first(name: "apns-request-id") ?? UUID().uuidString
        func refuse(_ reason: APNsReason) -> Answer { .refused(reason, requestID: requestID) }
        guard let path = headers.first(name: ":path"), let method = headers.first(name: ":method") else {
            return refuse(.badPath)
        }
        let operation: Operation
        let bundleID: Substring
        if path.hasPrefix(Self.broadcastPrefix) {
            bundleID = path.dropFirst(Self.broadcastPrefix.count)
            guard method == "POST" else { return refuse(.methodNotAllowed) }
            operation = .broadcast
        } else {
            let rest = path.dropFirst(Self.managementPrefix.count)
            guard let slash = rest.lastIndex(of: "/") else { return refuse(.badPath) }
            bundleID = rest[..<slash]
            switch (rest[rest.index(after: slash)...], method) {
            case ("channels", "POST"): operation = .create
            case ("channels", "GET"): operation = .read
            case ("channels", "DELETE"): operation = .delete
            case ("all-channels", "GET"): operation = .list
            case ("channels", _), ("all-channels", _): return refuse(.methodNotAllowed)
            default: return refuse(.badPath)
            }
        }
        guard !bundleID.isEmpty, !bundleID.contains("/") else { return refuse(.badPath) }
        let bundle = String(bundleID)
        switch authenticate() {
        case .failure(let rejection): return refuse(rejection.reason)
        case .success(let certificateTopic):
            guard validator.allows(bundleID: bundle, certificateTopic: certificateTopic) else { return refuse(.topicDisallowed) }
        }
        if disabledBundleIDs.contains(bundle) { return refuse(.featureNotEnabled) }

        switch operation {
        case .create:
            return create(bundle: bundle, body: body, requestID: requestID)
        case .list:
            let ids = state.withLockedValue { $0.channels[bundle]?.keys.sorted() ?? [] }
            let list = ids.map { #""\#($0)""# }.joined(separator: ",")
            return Answer(status: 200, headers: [("apns-request-id", requestID)], body: #"{"channels":[\#(list)]}"#)
        case .read, .delete, .broadcast:
            guard let raw = headers.first(name: "apns-channel-id") else { return refuse(.missingChannelID) }
            guard APNsChannelID(raw) != nil else { return refuse(.badChannelID) }
            guard let policy = state.withLockedValue({ $0.channels[bundle]?[raw] }) else { return refuse(.channelNotRegistered) }
            switch operation {
            case .read:
                return Answer(
                    status: 200, headers: [("apns-request-id", requestID)],
                    body: #"{"message-storage-policy":\#(policy.rawValue),"push-type":"LiveActivity"}"#)
            case .delete:
                state.withLockedValue { _ = $0.channels[bundle]?.removeValue(forKey: raw) }
                return Answer(status: 204, headers: [("apns-request-id", requestID)])
            default:
                if let reason = Self.checkBroadcast(headers: headers, body: body, policy: policy) { return refuse(reason) }
                state.withLockedValue { $0.broadcasts[raw, default: 0] += 1 }
                return Answer(status: 200, headers: [("apns-request-id", requestID)])
            }
        }
    }

    private func create(bundle: String, body: ByteBuffer, requestID: String) -> Answer {
        let object = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any]
        guard let pushType = object?["push-type"] as? String else { return .refused(.missingPushType, requestID: requestID) }
        guard pushType == "LiveActivity" else { return .refused(.invalidPushType, requestID: requestID) }
        guard let number = object?["message-storage-policy"] as? Int, let policy = APNsMessageStoragePolicy(rawValue: number) else {
            return .refused(Self.badStoragePolicy, requestID: requestID)
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let id = Data(bytes).base64EncodedString()
        let created = state.withLockedValue { state in
            guard (state.channels[bundle]?.count ?? 0) < maxPerApp else { return false }
            state.channels[bundle, default: [:]][id] = policy
            return true
        }
        guard created else { return .refused(.cannotCreateChannelConfig, requestID: requestID) }
        return Answer(status: 201, headers: [("apns-request-id", requestID), ("apns-channel-id", id)])
    }

    /// A broadcast's headers and payload, checked as for a device: push type, priority,
    /// expiration (0 on a channel that stores nothing), payload.
    private static func checkBroadcast(headers: HPACKHeaders, body: ByteBuffer, policy: APNsMessageStoragePolicy) -> APNsReason? {
        guard let pushType = headers.first(name: "apns-push-type") else { return .missingPushType }
        guard pushType == APNsPushType.liveactivity.rawValue else { return .invalidPushType }
        if let raw = headers.first(name: "apns-priority") {
            guard let value = Int(raw), APNsPriority(rawValue: value) != nil else { return .badPriority }
        }
        if let raw = headers.first(name: "apns-expiration") {
            guard let value = Int64(raw), value >= 0 else { return .badExpirationDate }
            if policy == .noMessageStored, value != 0 { return .badExpirationDate }
        }
        return APNsSimulatorRequestValidator.payloadProblem(body, pushType: .liveactivity)
    }
}
