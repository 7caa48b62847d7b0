import APNsCore
import Foundation
import PushCore
import Testing

@testable import PushGateway

@Suite("Online delivery rules")
struct OnlineDeliveryTests {
    @Test("each send ends once: acked, or handed back as not connected, connection lost or no ack")
    func plan() {
        let plan = OnlineDeliveryPlan(
            written: [true, false, true, true, true],
            results: [.acked, nil, .connectionLost, nil, .acked])
        #expect(plan.acknowledged == [0, 4])
        #expect(plan.fallbacks.map(\.index) == [1, 2, 3])
        #expect(plan.fallbacks.map(\.reason) == [.notConnected, .connectionLost, .noAck])
        #expect(plan.fallbackCounts == [.notConnected: 1, .connectionLost: 1, .noAck: 1])
        // Nothing written: everything goes back, nothing is acked.
        let none = OnlineDeliveryPlan(written: [false, false], results: [nil, nil])
        #expect(none.acknowledged.isEmpty)
        #expect(none.fallbacks.map(\.reason) == [.notConnected, .notConnected])
    }

    @Test("a message later than one ack timeout is stale (its APNs fallback may be on its way)")
    func stale() {
        #expect(!OnlineDeliveryPlan.isStale(publishedAt: 10_000, now: 15_000, ackTimeout: .seconds(5)))
        #expect(OnlineDeliveryPlan.isStale(publishedAt: 10_000, now: 15_001, ackTimeout: .seconds(5)))
        #expect(!OnlineDeliveryPlan.isStale(publishedAt: 10_000, now: 9_000, ackTimeout: .seconds(5)))
    }

    @Test("a batch returns as soon as every written send is resolved, with each resolution")
    func batchResolves() async {
        let acks = OnlineAcks()
        let batch = OnlineAcks.Batch(count: 3, expected: 2)
        acks.expect(connection: 1, id: "j:0", batch: batch, index: 0)
        acks.expect(connection: 2, id: "j:2", batch: batch, index: 2)
        #expect(acks.waiting == 2)
        let started = ContinuousClock.now
        async let results = batch.wait(atMost: .seconds(30))
        #expect(acks.acknowledge(connection: 1, id: "j:0") != nil)
        // An ack on another connection, or of another id, is not this send's.
        #expect(acks.acknowledge(connection: 1, id: "j:2") == nil)
        acks.connectionEnded(2)
        #expect(await results == [.acked, nil, .connectionLost])
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(acks.waiting == 0)
    }

    @Test("at the timeout a batch closes: later acks count for nothing")
    func batchTimesOut() async {
        let acks = OnlineAcks()
        let batch = OnlineAcks.Batch(count: 2, expected: 2)
        acks.expect(connection: 5, id: "j:1", batch: batch, index: 0)
        acks.expect(connection: 5, id: "j:2", batch: batch, index: 1)
        #expect(acks.acknowledge(connection: 5, id: "j:1") != nil)
        let results = await batch.wait(atMost: .milliseconds(50))
        #expect(results == [.acked, nil])
        #expect(acks.acknowledge(connection: 5, id: "j:2") == nil)
        acks.forget([(5, "j:1"), (5, "j:2")])
        #expect(acks.waiting == 0)
        // A batch with nothing written returns at once.
        #expect(await OnlineAcks.Batch(count: 1, expected: 0).wait(atMost: .seconds(30)) == [nil])
    }

    @Test("a push frame carries the message id, the job, the push type and the payload")
    func pushFrame() throws {
        let job = try PushJob.decodeAndValidate(
            from: Data(
                #"{"id":"j1","app":"news","environment":"sandbox","audience":{"tokens":["\#(String(repeating: "ab", count: 32))"]},"notification":{"aps":{"alert":"hi"}},"headers":{"push-type":"alert"},"delivery":"online-first"}"#
                    .utf8))
        let id = GatewayMessages.messageID(jobID: "j1", position: 42)
        #expect(id == "j1:42")
        let bytes = GatewayMessages.PushFrames(jobID: "j1", job: job).frame(id: id)
        let frame = try JSONValue(parsing: Data(bytes))
        #expect(frame == ["type": "push", "id": "j1:42", "job": "j1", "push-type": "alert", "notification": ["aps": ["alert": "hi"]]])
        // The same bytes as the whole frame serialized at once, keys in the documented order.
        let whole: JSONValue = ["type": "push", "id": "j1:42", "job": "j1", "push-type": "alert", "notification": job.notification.jsonValue]
        #expect(bytes == Array(whole.compactData()))
        // An id that needs escaping stays a JSON string.
        let odd = try JSONValue(parsing: Data(GatewayMessages.PushFrames(jobID: "j1", job: job).frame(id: "a\"b:1")))
        #expect(odd.objectValue?["id"] == "a\"b:1")
        // A replay from the inbox says so after the payload.
        let replay = GatewayMessages.PushFrames(jobID: "j1", job: job, replay: true).frame(id: id)
        let replayed: JSONValue = [
            "type": "push", "id": "j1:42", "job": "j1", "push-type": "alert", "notification": job.notification.jsonValue, "replay": true,
        ]
        #expect(replay == Array(replayed.compactData()))
    }
}
