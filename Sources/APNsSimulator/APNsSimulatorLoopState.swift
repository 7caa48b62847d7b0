import APNsCore
import NIOCore

/// Counters and records of one event loop. Only ever touched on that loop, so the hot path takes
/// no lock; readers collect every loop's state with `EventLoop.submit`.
final class APNsSimulatorLoopState {
    /// Identifies one notification for duplicate counting.
    struct NotificationKey: Hashable {
        var deviceToken: String
        var apnsIDOrPayloadHash: String
        /// `apns-collapse-id`: copies that share one are shown once on the device.
        var collapseID: String? = nil
    }

    var requests = 0
    var accepted = 0
    var stalled = 0
    var pings = 0
    var unresponsiveConnections = 0
    var rejections: [String: Int] = [:]
    var acceptances: [NotificationKey: Int] = [:]
    var records: [APNsSimulatorRequestRecord] = []
    var random = SplitMix64()
    /// The faults and answer time in force on this loop: the configuration's at start, changed
    /// while running by ``APNsSimulator/setFaults(_:latency:)``.
    var faults: APNsSimulatorFaults
    var latency: APNsSimulatorLatency

    init(faults: APNsSimulatorFaults, latency: APNsSimulatorLatency) {
        self.faults = faults
        self.latency = latency
    }

    func reset() {
        requests = 0
        accepted = 0
        stalled = 0
        pings = 0
        unresponsiveConnections = 0
        rejections = [:]
        acceptances = [:]
        records = []
    }
}

// Each instance belongs to one event loop and is only touched there (see the type comment).
extension APNsSimulatorLoopState: @unchecked Sendable {}
