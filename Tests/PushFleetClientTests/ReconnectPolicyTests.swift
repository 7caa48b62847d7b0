import Foundation
import PushFleetClient
import Testing

@Suite("A device client's rules: reconnects, frames, duplicates")
struct ReconnectPolicyTests {
    @Test(arguments: [
        (UInt16?.none, ReconnectDecision.reconnectAfterBackoff), (1000, .reconnectAfterBackoff), (1001, .reconnectSoon),
        (4001, .reconnectAfterBackoff), (4002, .reconnectAfterBackoff), (4008, .reconnectAfterBackoff), (4029, .reconnectAfterBackoff),
    ])
    func closesThatReconnect(code: UInt16?, decision: ReconnectDecision) {
        #expect(ReconnectPolicy.decide(closeCode: code) == decision)
    }

    @Test(arguments: [1002, 1003, 1007, 1009, 4003, 4004, 4009] as [UInt16])
    func closesThatStop(code: UInt16) {
        guard case .stop(let reason) = ReconnectPolicy.decide(closeCode: code) else {
            Issue.record("\(code) stops the client")
            return
        }
        #expect(reason.contains("\(code)"))
    }

    @Test func theBackoffDoublesUpToItsCapWithFullJitter() {
        let policy = ReconnectPolicy(base: .milliseconds(500), cap: .seconds(8), drainSpread: .seconds(2))
        let ceilings = (0..<8).map { policy.delay(.reconnectAfterBackoff, attempt: $0, random: 0.999_999)! }
        #expect(ceilings.map { Int(($0 / .milliseconds(1)).rounded()) } == [500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000, 8_000])
        #expect(policy.delay(.reconnectAfterBackoff, attempt: 3, random: 0) == .zero)
        #expect(policy.delay(.reconnectAfterBackoff, attempt: 3, random: 0.5) == .seconds(2))
        // Far attempts do not overflow.
        #expect(policy.delay(.reconnectAfterBackoff, attempt: 10_000, random: 0.5) == .seconds(4))
        // After a drain: spread over 2 s whatever the attempt; a stop waits for nothing.
        #expect(policy.delay(.reconnectSoon, attempt: 6, random: 0.25) == .milliseconds(500))
        #expect(policy.delay(.stop(reason: "x"), attempt: 0, random: 0.5) == nil)
    }

    @Test func theGatewaysFramesAreRead() throws {
        #expect(
            try ClientFrames.parse(#"{"type":"welcome","gateway":"gw-a","connection":"7","ping-interval-seconds":25}"#)
                == .welcome(gateway: "gw-a", connection: "7"))
        let push = try ClientFrames.parse(
            #"{"type":"push","id":"j:3","job":"j","push-type":"alert","notification":{"aps":{"alert":"hi"}},"replay":true}"#)
        guard case .push(let message) = push else {
            Issue.record("a push")
            return
        }
        #expect(message.id == "j:3" && message.job == "j" && message.pushType == "alert" && message.replay)
        #expect(String(decoding: message.notification, as: UTF8.self) == #"{"aps":{"alert":"hi"}}"#)
        let live = try ClientFrames.parse(#"{"type":"push","id":"j:4","job":"j","push-type":"alert","notification":{}}"#)
        #expect(live == .push(PushMessage(id: "j:4", job: "j", pushType: "alert", notification: Data("{}".utf8), replay: false)))
        #expect(try ClientFrames.parse(#"{"type":"error","reason":"unknown message type 'x'"}"#) == .error(reason: "unknown message type 'x'"))
        #expect(try ClientFrames.parse(#"{"type":"news"}"#) == .other(type: "news"))
        for bad in ["", "[1]", #"{"id":1}"#, #"{"type":"push","id":"j:1"}"#, #"{"type":"welcome"}"#] {
            #expect(throws: ClientFrames.Unreadable.self, "\(bad)") { try ClientFrames.parse(bad) }
        }
        #expect(ClientFrames.ack(id: "j:\"3") == #"{"id":"j:\"3","type":"ack"}"#)
    }

    @Test func aMessageSeenLatelyIsNotNewAndTheOldestAreForgotten() {
        var recent = RecentMessages(capacity: 3)
        let first = ["a", "b", "c"].map { recent.insert($0) }
        #expect(first == [true, true, true])
        #expect(recent.contains("b") && !recent.contains("z"))
        let again = recent.insert("b")
        #expect(!again)
        recent.insert("d")  // forgets "a"
        #expect(!recent.contains("a") && recent.contains("d"))
        recent.insert("a")  // forgets "b"
        #expect(!recent.contains("b") && recent.contains("c") && recent.contains("d") && recent.contains("a"))
    }
}
