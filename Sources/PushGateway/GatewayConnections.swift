public import APNsCore
import NIOCore
import Synchronization

/// The open connections of one gateway, by device: to close an older connection of a device
/// that connects again, to drain them all on shutdown, and to count the online devices per app.
final class GatewayConnections: Sendable {
    private struct Entry {
        var connection: UInt64
        var channel: any Channel
    }

    private struct DeviceKey: Hashable {
        var app: String
        var device: DeviceToken
    }

    private struct State {
        var entries: [DeviceKey: Entry] = [:]
        var perApp: [String: Int] = [:]
    }

    private let state = Mutex(State())

    /// Adds a connection; answers the channel of the device's previous connection on this
    /// gateway, which the caller closes (the newest connection wins).
    func register(app: String, device: DeviceToken, connection: UInt64, channel: any Channel) -> (any Channel)? {
        state.withLock { state in
            let key = DeviceKey(app: app, device: device)
            let previous = state.entries.updateValue(Entry(connection: connection, channel: channel), forKey: key)
            if previous == nil { state.perApp[app, default: 0] += 1 }
            return previous?.channel
        }
    }

    /// Removes a connection, unless a newer one of its device replaced it. Answers whether it
    /// was the device's current one.
    @discardableResult
    func unregister(app: String, device: DeviceToken, connection: UInt64) -> Bool {
        state.withLock { state in
            let key = DeviceKey(app: app, device: device)
            guard state.entries[key]?.connection == connection else { return false }
            state.entries[key] = nil
            state.perApp[app, default: 1] -= 1
            return true
        }
    }

    /// The device's current connection on this gateway.
    func current(app: String, device: DeviceToken) -> (connection: UInt64, channel: any Channel)? {
        state.withLock { state in
            state.entries[DeviceKey(app: app, device: device)].map { ($0.connection, $0.channel) }
        }
    }

    /// Every open connection's channel.
    var channels: [any Channel] {
        state.withLock { $0.entries.values.map(\.channel) }
    }

    /// Devices connected per app.
    var onlineDevices: [String: Int] {
        state.withLock { $0.perApp }
    }

    var count: Int {
        state.withLock { $0.entries.count }
    }
}
