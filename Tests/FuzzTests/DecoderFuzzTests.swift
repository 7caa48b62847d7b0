import APNsCore
import Foundation
import NIOCore
import PushConfiguration
import PushCore
import Testing

@testable import APNs
@testable import PushFleetFuzz

/// The decoders of everything PushFleet reads from outside (jobs from producers and the API,
/// pipeline messages from Kafka, APNs's error bodies, the configuration) under mutated inputs:
/// nothing crashes, every rejection is a typed error with a reason, and what is accepted reads
/// back the same after it is written again.
@Suite("Fuzzing the decoders")
struct DecoderFuzzTests {
    static let jsonSeeds = ["schemas/examples", "schemas/examples/invalid", "schemas/messages"]

    func run(_ target: String, corpus: [[UInt8]], _ check: @escaping @Sendable ([UInt8]) throws -> Void) async {
        await FuzzRun.run(target, corpus: corpus) { input, _ in try check(input) }
    }

    @Test("JSON parser: a rejection says where and why; what parses, written compactly, parses to the same value")
    func json() async {
        await run("json", corpus: FuzzRun.corpus("json", plus: Self.jsonSeeds), FuzzTarget.json.check)
    }

    @Test("push job: rejected with field, code and message, or accepted and read back equal")
    func job() async {
        await run("job", corpus: FuzzRun.corpus("job", plus: Self.jsonSeeds), FuzzTarget.job.check)
    }

    @Test("delivery chunk: rejected with a reason, or accepted and read back equal")
    func chunk() async {
        await run("chunk", corpus: FuzzRun.corpus("chunk", plus: ["schemas/messages/push.deliveries.json"]), FuzzTarget.chunk.check)
    }

    @Test("feedback event: rejected with a reason, or accepted and read back equal")
    func feedback() async {
        await run("feedback", corpus: FuzzRun.corpus("feedback"), FuzzTarget.feedback.check)
    }

    @Test("dead letter: read back equal, and written within Kafka's smallest message limit it fits, whatever its texts hold")
    func deadLetter() async {
        let seeds = ["schemas/messages/push.dlq-message.json", "schemas/messages/push.dlq-notification.json"]
        await run("dead-letter", corpus: FuzzRun.corpus("dead-letter", plus: seeds), FuzzTarget.deadLetter.check)
    }

    @Test("APNs error body: whatever the server sends, the answer keeps its status and a reason only from a string")
    func apnsErrorBody() async {
        await run("apns-error", corpus: FuzzRun.corpus("apns-error")) { input in
            var body = ByteBufferAllocator().buffer(capacity: input.count)
            body.writeBytes(input)
            let response = APNsClient.response(status: 400, headers: APNsAnswerHeaders(apnsID: "x"), body: body, attempts: 1)
            guard response.status == 400, response.attempts == 1 else { throw FuzzFinding("the answer lost its status") }
            if let reason = response.reason, reason.rawValue.isEmpty, !String(decoding: input, as: UTF8.self).contains("\"\"") {
                throw FuzzFinding("an empty reason out of a body without an empty string")
            }
        }
    }

    @Test("configuration: rejected naming the key with a message, never a crash")
    func configuration() async {
        let seeds = FuzzRun.corpus("config", plus: ["deploy/config/pushfleet.yaml"]) + [Array(PushFleetConfiguration.exampleYAML.utf8)]
        await run("config", corpus: seeds, FuzzTarget.config.check)
    }
}
