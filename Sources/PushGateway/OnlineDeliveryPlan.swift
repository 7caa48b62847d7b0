import FlowControl

/// What becomes of the sends of one `push.online` message once its acks are in: each send ends
/// once, either acknowledged over the online channel (an `online` outcome and a `delivered`
/// receipt) or handed back to `push.deliveries` for APNs, with why. Pure.
struct OnlineDeliveryPlan: Equatable, Sendable {
    /// Why a send goes through APNs after all.
    enum Fallback: String, CaseIterable, Sendable {
        /// The device was not connected to this gateway when its send arrived (it moved, or its
        /// presence record outlived its connection).
        case notConnected = "not-connected"
        /// No ack within the ack timeout.
        case noAck = "no-ack"
        /// The connection ended before the ack.
        case connectionLost = "connection-lost"
    }

    /// Indexes of the acknowledged sends.
    var acknowledged: [Int] = []
    /// Indexes of the sends for APNs, with why.
    var fallbacks: [(index: Int, reason: Fallback)] = []

    /// The plan for sends that were written to a connection (`written`) and resolved as
    /// `results` say (`nil`: no ack in time, or never written).
    init(written: [Bool], results: [OnlineAcks.Resolution?]) {
        precondition(written.count == results.count, "one result per send")
        for index in written.indices {
            switch (written[index], results[index]) {
            case (false, _): fallbacks.append((index, .notConnected))
            case (true, .acked): acknowledged.append(index)
            case (true, .connectionLost): fallbacks.append((index, .connectionLost))
            case (true, nil): fallbacks.append((index, .noAck))
            }
        }
    }

    /// Whether a `push.online` message published at `publishedAt` (ms since 1970) arrives too
    /// late to be delivered: its sends' resend-buffer entries fall due at twice the ack timeout
    /// after publication (``GatewaySettings/fallbackDelay``), so one arriving later than one ack
    /// timeout could not wait a whole ack timeout without meeting its own APNs fallback.
    static func isStale(publishedAt: Int64, now: Int64, ackTimeout: Duration) -> Bool {
        now - publishedAt > ackTimeout.roundedUpMilliseconds
    }

    /// Fallbacks counted by reason.
    var fallbackCounts: [Fallback: Int] {
        fallbacks.reduce(into: [:]) { $0[$1.reason, default: 0] += 1 }
    }

    static func == (left: OnlineDeliveryPlan, right: OnlineDeliveryPlan) -> Bool {
        left.acknowledged == right.acknowledged && left.fallbacks.map(\.index) == right.fallbacks.map(\.index)
            && left.fallbacks.map(\.reason) == right.fallbacks.map(\.reason)
    }
}
