import Foundation

/// A notification the gateway delivered: its message id (what the app acknowledges), its job,
/// push type and payload (`notification`, as APNs would carry it, as JSON), and whether it was
/// replayed from the device's inbox as it connected.
public struct PushMessage: Sendable, Hashable {
    public var id: String
    public var job: String
    public var pushType: String
    /// The payload as JSON (`{"aps": {…}, …}`).
    public var notification: Data
    /// Whether it came from the device's inbox (an online-only job's message kept while the
    /// device was not connected) rather than live.
    public var replay: Bool

    public init(id: String, job: String, pushType: String, notification: Data, replay: Bool) {
        self.id = id
        self.job = job
        self.pushType = pushType
        self.notification = notification
        self.replay = replay
    }
}

/// The gateway's frames as a device client reads them, and the client's own. Pure.
public enum ClientFrames {
    /// A frame from the gateway.
    public enum Incoming: Equatable, Sendable {
        /// `{"type":"welcome",…}`: the connection is authenticated.
        case welcome(gateway: String, connection: String)
        /// `{"type":"push",…}`.
        case push(PushMessage)
        /// `{"type":"error","reason":…}`: a message of the client was not understood.
        case error(reason: String)
        /// A frame of a type this client does not know (a newer gateway's): ignored.
        case other(type: String)
    }

    /// Why a frame is not one a gateway sends.
    public struct Unreadable: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    public static func parse(_ text: String) throws(Unreadable) -> Incoming {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            throw Unreadable(description: "not a JSON object")
        }
        guard let type = object["type"] as? String else { throw Unreadable(description: "no string 'type'") }
        switch type {
        case "welcome":
            guard let gateway = object["gateway"] as? String, let connection = object["connection"] as? String else {
                throw Unreadable(description: "a welcome without its gateway and connection")
            }
            return .welcome(gateway: gateway, connection: connection)
        case "push":
            guard let id = object["id"] as? String, let job = object["job"] as? String, let pushType = object["push-type"] as? String,
                let notification = object["notification"] as? [String: Any],
                let payload = try? JSONSerialization.data(withJSONObject: notification, options: [.sortedKeys])
            else {
                throw Unreadable(description: "a push without its id, job, push-type and notification")
            }
            return .push(PushMessage(id: id, job: job, pushType: pushType, notification: payload, replay: object["replay"] as? Bool ?? false))
        case "error":
            return .error(reason: object["reason"] as? String ?? "")
        default:
            return .other(type: type)
        }
    }

    /// `{"type":"ack","id":…}`.
    public static func ack(id: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: ["type": "ack", "id": id], options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

/// The ids of the messages the app acknowledged lately, so that one delivered again (live and
/// replayed, or after a reconnect before the gateway had the ack) is acknowledged again without
/// reaching the app twice. Holds the last `capacity` ids.
public struct RecentMessages: Sendable {
    private var order: [String] = []
    private var seen: Set<String> = []
    private var next = 0
    public let capacity: Int

    public init(capacity: Int = 1_000) {
        precondition(capacity > 0, "it remembers at least one id")
        self.capacity = capacity
    }

    public func contains(_ id: String) -> Bool {
        seen.contains(id)
    }

    /// Remembers `id`; answers whether it is new.
    @discardableResult
    public mutating func insert(_ id: String) -> Bool {
        guard !seen.contains(id) else { return false }
        if order.count < capacity {
            order.append(id)
        } else {
            seen.remove(order[next])
            order[next] = id
            next = (next + 1) % capacity
        }
        seen.insert(id)
        return true
    }
}
