import NIOCore

/// Counters and records of one event loop. Only ever touched on that loop, so the hot path takes
/// no lock; readers collect every loop's state with `EventLoop.submit`.
final class APNsSimulatorLoopState {
    /// Identifies one notification for duplicate counting.
    struct NotificationKey: Hashable {
        var deviceToken: String
        var apnsIDOrPayloadHash: String
    }

    var requests = 0
    var accepted = 0
    var stalled = 0
    var pings = 0
    var unresponsiveConnections = 0
    var rejections: [String: Int] = [:]
    var acceptances: [NotificationKey: Int] = [:]
    var records: [APNsSimulatorRequestRecord] = []
    var random = SplitMix64(seed: UInt64.random(in: .min ... .max))

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

/// A tiny fast generator for fault and latency draws on the hot path.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

// Each instance belongs to one event loop and is only touched there (see the type comment).
extension APNsSimulatorLoopState: @unchecked Sendable {}
