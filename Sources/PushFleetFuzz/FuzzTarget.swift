import Foundation
import PushConfiguration
import PushCore

/// The decoders of outside input and the rules each must keep whatever bytes it gets, shared by
/// the two fuzzers: libFuzzer (coverage-guided, `scripts/fuzz.sh`, on demand) and the seeded
/// mutation fuzzer of `Tests/FuzzTests` (bounded, in CI).
enum FuzzTarget: String, CaseIterable, Sendable {
    /// The JSON parser: a rejection says where and why; what parses, written compactly, parses
    /// to the same value, and that form is stable.
    case json
    /// Push jobs: rejected with field, code and message, or accepted and read back equal.
    case job
    /// Delivery chunks (`push.deliveries`): the same rule as jobs.
    case chunk
    /// Feedback events (`push.feedback`): the same rule as jobs.
    case feedback
    /// Dead letters (`push.dlq`): read back equal, and written within Kafka's smallest message
    /// limit they fit and keep what locates them.
    case deadLetter = "dead-letter"
    /// The configuration: rejected naming the key with a message, never a crash.
    case config

    /// Checks one input; throws the rule it broke.
    func check(_ input: [UInt8]) throws(FuzzFinding) {
        do {
            switch self {
            case .json: try Self.json(input)
            case .job: try Self.readsBack(input, PushJob.decodeAndValidate(from:), { $0.jsonData() })
            case .chunk: try Self.readsBack(input, DeliveryChunk.decodeAndValidate(from:), { $0.jsonData() })
            case .feedback: try Self.readsBack(input, FeedbackEvent.decode(from:), { $0.jsonData() })
            case .deadLetter: try Self.deadLetter(input)
            case .config: try Self.configuration(input)
            }
        } catch let finding as FuzzFinding {
            throw finding
        } catch {
            throw FuzzFinding("an error the decoder does not document: \(type(of: error)): \(error)")
        }
    }

    private static func json(_ input: [UInt8]) throws {
        do {
            let value = try JSONValue(parsing: Data(input))
            let compact = value.compactData()
            let again = try JSONValue(parsing: compact)
            guard again == value else { throw FuzzFinding("the compact form parses to another value") }
            guard again.compactData() == compact else { throw FuzzFinding("the compact form is not stable") }
        } catch let error as JSONSyntaxError {
            guard !error.reason.isEmpty, (0...input.count).contains(error.offset), error.line >= 1 else {
                throw FuzzFinding("a rejection without reason or position: \(error)")
            }
        }
    }

    /// A decoder of pipeline messages: it rejects with a ``MessageValidationError`` that has a
    /// message, or accepts, and what it accepted, written again, reads back equal.
    private static func readsBack<Value: Equatable>(_ input: [UInt8], _ decode: (Data) throws -> Value, _ encode: (Value) -> Data) throws {
        do {
            let value = try decode(Data(input))
            guard try decode(encode(value)) == value else { throw FuzzFinding("written again, it reads back different") }
        } catch let error as MessageValidationError {
            guard !error.message.isEmpty else { throw FuzzFinding("a rejection without message: \(error)") }
        }
    }

    private static func deadLetter(_ input: [UInt8]) throws {
        guard let letter = try? DeadLetter.decode(from: Data(input)) else { return }
        guard try DeadLetter.decode(from: letter.jsonData()) == letter else {
            throw FuzzFinding("the letter written again reads back different")
        }
        // Kafka's smallest message.max.bytes is 1,000.
        let limit = 1_000
        let fitted = letter.jsonData(within: limit)
        guard fitted.count <= limit else {
            throw FuzzFinding("written within \(limit) bytes it takes \(fitted.count)")
        }
        let cut = try DeadLetter.decode(from: fitted)
        guard cut.deadLetteredAt == letter.deadLetteredAt, cut.source?.offset == letter.source?.offset,
            cut.source?.partition == letter.source?.partition, cut.status == letter.status
        else {
            throw FuzzFinding("cutting the letter changed what locates it")
        }
    }

    private static func configuration(_ input: [UInt8]) throws {
        do {
            _ = try PushFleetConfiguration.parse(yaml: String(decoding: input, as: UTF8.self), baseDirectory: "/nonexistent", environment: [:])
        } catch {
            // `parse` throws only ConfigurationError (typed throws).
            guard !error.key.isEmpty, !error.message.isEmpty else { throw FuzzFinding("a rejection without key or message: \(error)") }
        }
    }
}

/// A rule a decoder broke.
struct FuzzFinding: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
