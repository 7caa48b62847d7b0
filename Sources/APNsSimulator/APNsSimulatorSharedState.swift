import Atomics
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// What all connections of one simulator share: configuration, per-loop counters, and the few
/// global counters (atomics) that the fault injector needs.
final class APNsSimulatorSharedState: Sendable {
    let configuration: APNsSimulatorConfiguration
    let validator: APNsSimulatorRequestValidator
    let channels: APNsSimulatorChannels
    private let loopStates: [ObjectIdentifier: APNsSimulatorLoopState]
    /// Complete requests across the simulator, for "every N streams" faults.
    let streams = ManagedAtomic<Int>(0)
    let connections = ManagedAtomic<Int>(0)
    let goAways = ManagedAtomic<Int>(0)
    let connectionResets = ManagedAtomic<Int>(0)
    let tlsHandshakeFailures = ManagedAtomic<Int>(0)
    let idleTimeouts = ManagedAtomic<Int>(0)
    /// Per-device request windows; only used when a per-device rate is configured.
    private let deviceWindows = NIOLockedValueBox<[String: (second: Int64, count: Int)]>([:])

    init(configuration: APNsSimulatorConfiguration, eventLoops: [any EventLoop]) {
        self.configuration = configuration
        self.validator = APNsSimulatorRequestValidator(configuration: configuration)
        self.channels = APNsSimulatorChannels(
            maxPerApp: configuration.maxChannelsPerApp, disabledBundleIDs: configuration.broadcastDisabledBundleIDs)
        var states: [ObjectIdentifier: APNsSimulatorLoopState] = [:]
        for loop in eventLoops {
            states[ObjectIdentifier(loop)] = APNsSimulatorLoopState(faults: configuration.faults, latency: configuration.latency)
        }
        self.loopStates = states
    }

    /// The state of the loop a channel runs on.
    func loopState(for eventLoop: any EventLoop) -> APNsSimulatorLoopState {
        loopStates[ObjectIdentifier(eventLoop)]!
    }

    /// Whether one more notification to this device in the current second exceeds the rate.
    func exceedsDeviceRate(_ deviceToken: String, nowMilliseconds: Int64) -> Bool {
        guard let limit = configuration.devices.maxNotificationsPerSecondPerDevice else { return false }
        let second = nowMilliseconds / 1000
        return deviceWindows.withLockedValue { windows in
            var window = windows[deviceToken] ?? (second, 0)
            if window.second != second { window = (second, 0) }
            window.count += 1
            windows[deviceToken] = window
            return window.count > limit
        }
    }

    func resetGlobalCounters() {
        for counter in [streams, connections, goAways, connectionResets, tlsHandshakeFailures, idleTimeouts] {
            counter.store(0, ordering: .relaxed)
        }
        deviceWindows.withLockedValue { $0 = [:] }
        channels.resetBroadcasts()
    }

    /// Milliseconds since 1970 on the server's clock.
    static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
