import DequeModule
import HTTP2Frames

/// The frames written on one connection of the binary interface whose fate is not known yet,
/// and the rule for what the gateway's answer makes of them. The gateway answers only
/// refusals: one error response naming the refused frame's identifier, then it closes the
/// connection, having dropped everything written after that frame.
///
/// - An error response: the frames written before the named one were taken; the named one is
///   refused with the status (``APNsBinaryStatus/shutdown`` instead says it was the last one
///   taken); every frame after it is to be written again on a new connection. A name the window
///   does not hold (a frame settled already, or never written here) leaves every pending frame
///   to be written again.
/// - A close without an error response: nothing says which frames were taken, so every pending
///   one is written again (a notification may then arrive twice; none is lost).
/// - The quiet period: a frame no error response has named within it after it was written
///   counts as taken.
package struct APNsBinarySendWindow<Frame> {
    private var pending: Deque<(identifier: UInt32, frame: Frame, writtenAt: ContinuousClock.Instant)> = []

    package init() {}

    /// Frames written and not settled yet.
    package var count: Int { pending.count }

    package mutating func written(_ frame: Frame, identifier: UInt32, at time: ContinuousClock.Instant) {
        pending.append((identifier, frame, time))
    }

    /// The frames written before `cutoff` (now minus the quiet period): taken.
    package mutating func settle(writtenBefore cutoff: ContinuousClock.Instant) -> [Frame] {
        var taken: [Frame] = []
        while let first = pending.first, first.writtenAt < cutoff {
            taken.append(pending.removeFirst().frame)
        }
        return taken
    }

    /// What an error response means for the pending frames.
    package struct Verdict {
        package var taken: [Frame] = []
        package var refused: Frame?
        package var writeAgain: [Frame] = []
    }

    package mutating func errorResponse(status: APNsBinaryStatus, identifier: UInt32) -> Verdict {
        var verdict = Verdict()
        guard let index = pending.firstIndex(where: { $0.identifier == identifier }) else {
            verdict.writeAgain = pending.map(\.frame)
            pending.removeAll()
            return verdict
        }
        verdict.taken = pending[..<index].map(\.frame)
        if status == .shutdown {
            verdict.taken.append(pending[index].frame)
        } else {
            verdict.refused = pending[index].frame
        }
        verdict.writeAgain = pending[(index + 1)...].map(\.frame)
        pending.removeAll()
        return verdict
    }

    /// The connection closed without an error response: every pending frame is written again.
    package mutating func closed() -> [Frame] {
        defer { pending.removeAll() }
        return pending.map(\.frame)
    }
}
