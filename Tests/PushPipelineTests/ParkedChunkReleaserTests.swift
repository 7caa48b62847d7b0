import PushStore
import Testing

@testable import PushPipeline

@Suite("Parked chunk releaser: when a due list goes out")
struct ParkedChunkReleaserTests {
    typealias Releaser = ParkedChunkReleaser
    let slot: Int64 = 1_800_000_000_000

    @Test func aListGoesOutOnceItsJobIsExpandedOrCancelled() {
        #expect(Releaser.decision(slot: slot, now: slot, expansionComplete: true, cancelled: false) == .publish)
        // Cancelled while paused in its expansion: never expanded again, its chunks go out to be counted cancelled.
        #expect(Releaser.decision(slot: slot, now: slot, expansionComplete: false, cancelled: true) == .publish)
        #expect(Releaser.decision(slot: slot, now: slot + 1, expansionComplete: false, cancelled: false) == .postpone)
    }

    @Test func aListWhoseJobNeverFinishesExpandingIsForgottenWhenItsKeysAreGone() {
        let kept = ParkedChunks.keptAfterSlot
        #expect(Releaser.decision(slot: slot, now: slot + kept, expansionComplete: false, cancelled: false) == .postpone)
        #expect(Releaser.decision(slot: slot, now: slot + kept + 1, expansionComplete: false, cancelled: false) == .forget)
        #expect(Releaser.decision(slot: slot, now: slot + kept + 1, expansionComplete: true, cancelled: false) == .publish)
    }
}
