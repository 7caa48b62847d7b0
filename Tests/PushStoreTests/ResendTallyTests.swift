import Testing

@testable import PushStore

@Suite("Resend tallies")
struct ResendTallyTests {
    @Test func aTallyIsStoredAndReadBackWhole() {
        let tally = ResendTally(
            id: "t1", jobID: "job with spaces: and colons", counters: [.accepted: 2, .sent: 3, .failed(reason: "BadDeviceToken"): 1, .online: 7])
        #expect(tally.value == "job with spaces: and colons\naccepted=2\nfailed:BadDeviceToken=1\nonline=7\nsent=3")
        #expect(ResendTally(id: "t1", value: tally.value) == tally)
        // The script's order of counters may differ; a name listed twice adds up.
        #expect(
            ResendTally(id: "t2", value: "j\nsent=1\naccepted=1\nsent=2") == ResendTally(id: "t2", jobID: "j", counters: [.sent: 3, .accepted: 1]))
    }

    @Test(arguments: ["", "job", "\naccepted=1", "job\naccepted", "job\naccepted=x", "job\nno-such-counter=1", "job\naccepted=0", "job\naccepted=-1"])
    func aValuePushFleetDidNotWriteIsNoTally(value: String) {
        #expect(ResendTally(id: "t", value: value) == nil)
    }
}
