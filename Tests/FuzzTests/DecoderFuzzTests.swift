import APNsCore
import Foundation
import NIOCore
import PushConfiguration
import PushCore
import Testing

@testable import APNs

/// The decoders of everything PushFleet reads from outside (jobs from producers and the API,
/// pipeline messages from Kafka, APNs's error bodies, the configuration) under mutated inputs:
/// nothing crashes, every rejection is a typed error with a reason, and what is accepted reads
/// back the same after it is written again.
@Suite("Fuzzing the decoders")
struct DecoderFuzzTests {
    static let jsonSeeds = ["schemas/examples", "schemas/examples/invalid", "schemas/messages"]

    func run(_ target: String, corpus: [[UInt8]], _ check: ([UInt8]) throws -> Void) {
        // Each target its own stream of inputs from the run's seed (FNV-1a of its name).
        let salt = target.utf8.reduce(UInt64(0xCBF2_9CE4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
        var mutator = Mutator(seed: FuzzRun.seed ^ salt, corpus: corpus)
        var failures = 0
        for iteration in 0..<FuzzRun.iterations {
            let input = iteration < corpus.count ? corpus[iteration] : mutator.input()
            do {
                try check(input)
            } catch {
                failures += 1
                Issue.record("\(target): \(error) — \(FuzzRun.describe(input, iteration: iteration))")
                if failures >= 5 { return }
            }
        }
    }

    struct Broken: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test("JSON parser: a rejection says where and why; what parses, written compactly, parses to the same value")
    func json() {
        run("json", corpus: FuzzRun.corpus("json", plus: Self.jsonSeeds)) { input in
            do {
                let value = try JSONValue(parsing: Data(input))
                let compact = value.compactData()
                let again = try JSONValue(parsing: compact)
                guard again == value else { throw Broken("the compact form parses to another value") }
                guard again.compactData() == compact else { throw Broken("the compact form is not stable") }
            } catch let error as JSONSyntaxError {
                guard !error.reason.isEmpty, (0...input.count).contains(error.offset), error.line >= 1 else {
                    throw Broken("a rejection without reason or position: \(error)")
                }
            }
        }
    }

    /// A decoder of pipeline messages: it rejects with a ``PushJobValidationError`` that has a
    /// message, or accepts, and what it accepted, written again, reads back equal.
    func readsBack<Value: Equatable>(_ input: [UInt8], _ decode: (Data) throws -> Value, _ encode: (Value) -> Data) throws {
        do {
            let value = try decode(Data(input))
            guard try decode(encode(value)) == value else { throw Broken("written again, it reads back different") }
        } catch let error as PushJobValidationError {
            guard !error.message.isEmpty else { throw Broken("a rejection without message: \(error)") }
        }
    }

    @Test("push job: rejected with field, code and message, or accepted and read back equal")
    func job() {
        run("job", corpus: FuzzRun.corpus("job", plus: Self.jsonSeeds)) { input in
            try readsBack(input, PushJob.decodeAndValidate(from:), { $0.jsonData() })
        }
    }

    @Test("delivery chunk: rejected with a reason, or accepted and read back equal")
    func chunk() {
        run("chunk", corpus: FuzzRun.corpus("chunk", plus: ["schemas/messages/push.deliveries.json"])) { input in
            try readsBack(input, DeliveryChunk.decodeAndValidate(from:), { $0.jsonData() })
        }
    }

    @Test("feedback event: rejected with a reason, or accepted and read back equal")
    func feedback() {
        run("feedback", corpus: FuzzRun.corpus("feedback")) { input in
            try readsBack(input, FeedbackEvent.decode(from:), { $0.jsonData() })
        }
    }

    @Test("dead letter: read back equal, and written within Kafka's smallest message limit it fits, whatever its texts hold")
    func deadLetter() {
        run("dead-letter", corpus: FuzzRun.corpus("dead-letter", plus: ["schemas/messages/push.dlq-message.json", "schemas/messages/push.dlq-notification.json"])) { input in
            guard let letter = try? DeadLetter.decode(from: Data(input)) else { return }
            guard try DeadLetter.decode(from: letter.jsonData()) == letter else {
                throw Broken("the letter written again reads back different")
            }
            // Kafka's smallest message.max.bytes is 1,000.
            let limit = 1_000
            let fitted = letter.jsonData(within: limit)
            guard fitted.count <= limit else {
                throw Broken("written within \(limit) bytes it takes \(fitted.count)")
            }
            let cut = try DeadLetter.decode(from: fitted)
            guard cut.deadLetteredAt == letter.deadLetteredAt, cut.source?.offset == letter.source?.offset, cut.source?.partition == letter.source?.partition, cut.status == letter.status else {
                throw Broken("cutting the letter changed what locates it")
            }
        }
    }

    @Test("APNs error body: whatever the server sends, the answer keeps its status and a reason only from a string")
    func apnsErrorBody() {
        run("apns-error", corpus: FuzzRun.corpus("apns-error")) { input in
            var body = ByteBufferAllocator().buffer(capacity: input.count)
            body.writeBytes(input)
            let response = APNsClient.response(status: 400, apnsID: "x", body: body, attempts: 1)
            guard response.status == 400, response.attempts == 1 else { throw Broken("the answer lost its status") }
            if let reason = response.reason, reason.rawValue.isEmpty, !String(decoding: input, as: UTF8.self).contains("\"\"") {
                throw Broken("an empty reason out of a body without an empty string")
            }
        }
    }

    @Test("configuration: rejected naming the key with a message, never a crash")
    func configuration() {
        let seeds = FuzzRun.corpus("config", plus: ["deploy/config/pushfleet.yaml"]) + [Array(PushFleetConfiguration.exampleYAML.utf8)]
        run("config", corpus: seeds) { input in
            do {
                _ = try PushFleetConfiguration.parse(yaml: String(decoding: input, as: UTF8.self), baseDirectory: "/nonexistent", environment: [:])
            } catch let error as ConfigurationError {
                guard !error.key.isEmpty, !error.message.isEmpty else { throw Broken("a rejection without key or message: \(error)") }
            }
        }
    }
}
