/// When a recall's expansion may read its campaign's sent state: once the campaign has no
/// notification in flight. Cancelling the campaign stops new admissions at once, but what workers
/// admitted before settles over the next moments; a device whose acceptance is recorded after the
/// recall read its bit would miss its withdraw. No worker's in-flight window is visible from
/// another, so the rule watches the campaign's report: it goes once the report is complete, or
/// once its finished count stayed the same for ``quietPeriod`` (a campaign paused before it was
/// recalled never completes: its dropped chunks are not published again), and at the latest after
/// ``longest``.
struct RecallSettling: Sendable {
    /// How long the campaign's finished count must stay still.
    let quietPeriod: Duration
    /// The longest a recall waits.
    let longest: Duration

    private var lastFinished: Int?
    private var stillSince: Duration = .zero

    init(quietPeriod: Duration = .seconds(10), longest: Duration = .seconds(60)) {
        self.quietPeriod = quietPeriod
        self.longest = longest
    }

    /// What to do after observing the campaign at `elapsed` since the wait began.
    enum Decision: Equatable, Sendable {
        case wait
        /// Read the sent state now; `settled` is false when the wait ran out instead.
        case go(settled: Bool)
    }

    /// Takes one observation of the campaign's report: complete or not, and its finished count.
    mutating func observe(complete: Bool, finished: Int, at elapsed: Duration) -> Decision {
        if complete { return .go(settled: true) }
        if finished != lastFinished {
            lastFinished = finished
            stillSince = elapsed
        }
        if elapsed - stillSince >= quietPeriod { return .go(settled: true) }
        if elapsed >= longest { return .go(settled: false) }
        return .wait
    }
}
