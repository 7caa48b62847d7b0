public import PushConfiguration
import Synchronization

/// What every connection of a gateway shares: its id and settings, the token verifier, the
/// connections by device and the presence batches. Sendable: read from every event loop.
struct GatewayContext: Sendable {
    let id: String
    let settings: GatewaySettings
    let schedule: HeartbeatSchedule
    let tokens: ConnectToken
    /// The configured app ids: a path naming another closes with 4004.
    let apps: Set<String>
    let connections: GatewayConnections
    let presence: PresenceWriter
    /// The online sends waiting for their acks.
    let acks: OnlineAcks
    /// Replays a connecting device's inbox.
    let replay: InboxReplay
    /// Unix seconds (the connect tokens' expiry is checked against it).
    let now: @Sendable () -> Int64
}

/// Connection numbers of one gateway process, from 1.
final class ConnectionNumbers: Sendable {
    private let last = Mutex<UInt64>(0)

    func next() -> UInt64 {
        last.withLock {
            $0 += 1
            return $0
        }
    }
}
