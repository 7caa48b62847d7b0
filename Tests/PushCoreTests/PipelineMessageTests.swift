import APNsCore
import Foundation
import Testing

@testable import PushCore

@Suite("Pipeline messages: delivery chunks, feedback events, dead letters")
struct PipelineMessageTests {
    static func token(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "cd", count: 24) + String(format: "%016x", n))
    }

    static let job = PushJob(
        id: "job-1", app: "news", environment: .production, audience: .broadcast,
        notification: APNsPayload(["aps": ["alert": "hi", "badge": 3], "story": "42"]),
        headers: PushHeaders(pushType: .alert, priority: .immediately, collapseID: "c"),
        throttle: ThrottleOverride(sleepAfter: 10, sleepMilliseconds: 5))

    @Test func chunkRoundTrips() throws {
        let tokens = (0..<1_000).map(Self.token)
        let positions = (0..<1_000).map { UInt32($0) * 4_099 + (UInt32.max - 4_099_000) }
        let chunk = DeliveryChunk(job: Self.job, chunkID: "s3-7", tokens: tokens, positions: positions)
        let decoded = try DeliveryChunk.decodeAndValidate(from: chunk.jsonData())
        #expect(decoded == chunk)
        #expect(decoded.positions == positions)
        #expect(decoded.job.audience == .tokens(tokens))
        #expect(decoded.job.throttle == Self.job.throttle)
        #expect(decoded.messageKey == "job-1/s3-7")
    }

    @Test func aChunkOfATagJobCarriesTheTagsItAddressed() throws {
        var job = Self.job
        job.audience = .tags(TagExpression(all: ["fans"], any: ["paris", "lyon"], none: ["muted"]))
        let chunk = DeliveryChunk(job: job, chunkID: "s0-0", tokens: [Self.token(1)], positions: [9])
        #expect(chunk.addressedTags == ["fans", "paris", "lyon"])
        let decoded = try DeliveryChunk.decodeAndValidate(from: chunk.jsonData())
        #expect(decoded.addressedTags == ["fans", "paris", "lyon"])
        #expect(decoded == chunk)
        let broadcast = DeliveryChunk(job: Self.job, chunkID: "s0-0", tokens: [Self.token(1)], positions: [9])
        #expect(try JSONValue(parsing: broadcast.jsonData()).objectValue?["tags"] == nil)

        var object = try #require(try JSONValue(parsing: chunk.jsonData()).objectValue)
        for (tags, code) in [(.array(["fans", ""]), MessageValidationError.Code.invalidValue), ("fans", .invalidType), (.array([7]), .invalidType)]
            as [(JSONValue, MessageValidationError.Code)]
        {
            object["tags"] = tags
            do {
                _ = try DeliveryChunk.decodeAndValidate(from: JSONValue.object(object).compactData())
                Issue.record("tags \(tags) were accepted")
            } catch {
                #expect(error.code == code, "\(tags)")
                #expect(error.field.hasPrefix("tags"), "\(tags)")
            }
        }
    }

    @Test func chunkRejectsWhatIsNotAChunk() throws {
        let chunk = DeliveryChunk(job: Self.job, chunkID: "t0", tokens: [Self.token(1)], positions: [0])
        var object = try #require(try JSONValue(parsing: chunk.jsonData()).objectValue)

        for (positions, code) in [
            (nil, MessageValidationError.Code.missingField), (.array([]), .invalidValue), (.array([0, 1]), .invalidValue),
            (.array([-1]), .invalidValue), (.array([.number(JSONNumber(Int(UInt32.max) + 1))]), .invalidValue), (.array(["7"]), .invalidType),
        ] as [(JSONValue?, MessageValidationError.Code)] {
            var broken = object
            broken["positions"] = positions
            do {
                _ = try DeliveryChunk.decodeAndValidate(from: JSONValue.object(broken).compactData())
                Issue.record("positions \(String(describing: positions)) were accepted")
            } catch {
                #expect(error.code == code, "\(String(describing: positions))")
                #expect(error.field.hasPrefix("positions"), "\(String(describing: positions))")
            }
        }

        var noChunk = object
        noChunk["chunk"] = nil
        #expect(throws: MessageValidationError.self) { try DeliveryChunk.decodeAndValidate(from: JSONValue.object(noChunk).compactData()) }
        do {
            _ = try DeliveryChunk.decodeAndValidate(from: JSONValue.object(noChunk).compactData())
        } catch {
            #expect(error.field == "chunk")
            #expect(error.code == .missingField)
        }

        var broadcast = object
        broadcast["audience"] = ["broadcast": true]
        do {
            _ = try DeliveryChunk.decodeAndValidate(from: JSONValue.object(broadcast).compactData())
            Issue.record("a broadcast audience is not a chunk")
        } catch {
            #expect(error.field == "audience")
        }

        object["id"] = nil
        do {
            _ = try DeliveryChunk.decodeAndValidate(from: JSONValue.object(object).compactData())
            Issue.record("a chunk needs the job id")
        } catch {
            #expect(error.field == "id")
        }

        var tooMany = try #require(try JSONValue(parsing: chunk.jsonData()).objectValue)
        tooMany["audience"] = .object(["tokens": .array((0..<1_001).map { .string(Self.token($0).hex) })])
        do {
            _ = try DeliveryChunk.decodeAndValidate(from: JSONValue.object(tooMany).compactData())
            Issue.record("a chunk holds at most 1,000 tokens")
        } catch {
            #expect(error.code == .tooManyTokens)
        }

        do {
            _ = try DeliveryChunk.decodeAndValidate(from: Data("[1,".utf8))
            Issue.record("not JSON")
        } catch {
            #expect(error.code == .malformedJSON)
        }
    }

    @Test func feedbackEventRoundTrips() throws {
        let event = FeedbackEvent(
            app: "news", token: Self.token(9), environment: .sandbox, reason: "Unregistered", invalidSince: 1_700_000_000_123, jobID: "j")
        #expect(try FeedbackEvent.decode(from: event.jsonData()) == event)
        var anonymous = event
        anonymous.jobID = nil
        #expect(try FeedbackEvent.decode(from: anonymous.jsonData()) == anonymous)
        #expect(!String(decoding: event.jsonData(), as: UTF8.self).contains("kind"), "a device token's event is as before")
        for kind in [TokenKind.voip, .pushToStart(attributesType: "MatchAttributes")] {
            var other = event
            other.kind = kind
            #expect(try FeedbackEvent.decode(from: other.jsonData()) == other)
        }
        let unknownKind = #"{"app":"news","token":"0a0b","environment":"sandbox","reason":"Unregistered","invalid-since":1,"kind":"fax"}"#
        #expect(throws: MessageValidationError.self) { try FeedbackEvent.decode(from: Data(unknownKind.utf8)) }
    }

    @Test func feedbackEventNamesTheBadField() throws {
        let cases: [(String, String)] = [
            (#"{"app":"a","token":"zz","environment":"sandbox","reason":"r","invalid-since":1}"#, "token"),
            (#"{"app":"a","token":"abcd","environment":"moon","reason":"r","invalid-since":1}"#, "environment"),
            (#"{"app":"a","token":"abcd","environment":"sandbox","reason":"r"}"#, "invalid-since"),
            (#"{"app":"a","token":"abcd","environment":"sandbox","reason":"r","invalid-since":1,"x":1}"#, "x"),
        ]
        for (json, field) in cases {
            do {
                _ = try FeedbackEvent.decode(from: Data(json.utf8))
                Issue.record("accepted \(json)")
            } catch {
                #expect(error.field == field, "\(json)")
            }
        }
    }

    @Test func deadLetterRoundTripsWithItsBytes() throws {
        let letter = DeadLetter(
            reason: "malformed-json", message: "bad", field: "$",
            source: DeadLetter.Source(topic: "push.jobs", partition: 2, offset: 17), original: Data([0, 255, 10]),
            deadLetteredAt: 5)
        let decoded = try DeadLetter.decode(from: letter.jsonData())
        #expect(decoded == letter)
        let object = try #require(try JSONSerialization.jsonObject(with: letter.jsonData()) as? [String: Any])
        #expect(object["original"] as? String == "AP8K")
        #expect(object["dead-lettered-at"] as? Int == 5)
    }
}

@Suite("A dead letter always fits one Kafka message")
struct DeadLetterSizeTests {
    static func letter(originalBytes: Int) -> DeadLetter {
        DeadLetter(
            reason: "malformed-json", message: "$: not JSON", field: "$",
            source: DeadLetter.Source(topic: "push.jobs", partition: 0, offset: 3),
            original: Data((0..<originalBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) }), deadLetteredAt: 1)
    }

    @Test("a letter that fits is left whole")
    func fits() {
        let letter = Self.letter(originalBytes: 1_000)
        #expect(letter.fitting(within: 10_000) == letter)
        #expect(letter.fitting(within: 10_000).originalSize == nil)
        #expect(letter.jsonData(within: 10_000) == letter.jsonData(), "what the pipeline publishes")
    }

    @Test("a message too large to carry whole keeps its first bytes and its full size, within the limit", arguments: [1_500, 4_096, 999_000])
    func cut(limit: Int) throws {
        let letter = Self.letter(originalBytes: limit)  // base64 makes it a third larger: never fits
        let cut = letter.fitting(within: limit)
        #expect(letter.jsonData(within: limit) == cut.jsonData(), "what the pipeline publishes")
        #expect(cut.jsonData().count <= limit)
        #expect(cut.originalSize == limit)
        let kept = try #require(cut.original)
        #expect(kept.count > 0 && kept == letter.original?.prefix(kept.count))
        #expect(cut.jsonData().count > limit - 8, "as many bytes as fit: \(cut.jsonData().count) of \(limit)")
        let decoded = try DeadLetter.decode(from: cut.jsonData())
        #expect(decoded == cut)
    }

    @Test("a letter whose other fields leave no room drops the bytes but keeps their size")
    func noRoom() {
        let letter = Self.letter(originalBytes: 500)
        let bare = DeadLetter(reason: letter.reason, message: letter.message, field: letter.field, source: letter.source, deadLetteredAt: 1)
        let cut = letter.fitting(within: bare.jsonData().count + 20)
        #expect(cut.original == nil)
        #expect(cut.originalSize == 500)
    }

    @Test("texts are left whole when cutting the original bytes is enough")
    func textsKeptWhenTheyFit() {
        var letter = Self.letter(originalBytes: 10_000)
        letter.message = String(repeating: "m", count: 300)
        let cut = letter.fitting(within: 4_096)
        #expect(cut.jsonData().count <= 4_096)
        #expect(cut.message == letter.message)
        #expect(cut.originalSize == 10_000 && (cut.original?.count ?? 0) > 0)
    }

    @Test("texts that echo a huge message are shortened, so the letter still fits (found by FuzzTests)")
    func hugeTexts() throws {
        let echoed = String(repeating: "é\u{1}", count: 400_000)
        let letter = DeadLetter(
            reason: "unknown-environment", message: "'\(echoed)' is not sandbox or production", field: "environment",
            jobID: echoed, source: DeadLetter.Source(topic: "push.jobs", partition: 2, offset: 9),
            original: Data(echoed.utf8), deadLetteredAt: 7)
        for limit in [1_000, 1_000_000] {
            let data = letter.jsonData(within: limit)
            #expect(data.count <= limit, "\(data.count) of \(limit)")
            let cut = try DeadLetter.decode(from: data)
            #expect(cut.message.hasPrefix("'é") && cut.message.hasSuffix("…"))
            #expect(cut.message.unicodeScalars.count <= 256 && cut.field == "environment")
            #expect(cut.originalSize == echoed.utf8.count && cut.source == letter.source && cut.deadLetteredAt == 7)
        }
        #expect(try DeadLetter.decode(from: letter.jsonData(within: 1_000_000)).original?.count ?? 0 > 400_000, "the room left goes to the original")
    }
}

@Suite("The example messages of schemas/messages decode with the Swift models")
struct MessageExampleTests {
    static let messages = Fixtures.schemas.appendingPathComponent("messages")

    func example(_ name: String) throws -> Data {
        try Data(contentsOf: Self.messages.appendingPathComponent(name))
    }

    @Test func delivery() throws {
        let chunk = try DeliveryChunk.decodeAndValidate(from: example("push.deliveries.json"))
        #expect(chunk.chunkID == "s3-17")
        #expect(chunk.tokens.count == 2)
        #expect(chunk.positions == [1_048_593, 1_048_609])
        #expect(chunk.job.headers.collapseID == "match-42")
    }

    @Test func feedback() throws {
        let event = try FeedbackEvent.decode(from: example("push.feedback.json"))
        #expect(event.reason == "Unregistered")
        #expect(event.invalidSince == 1_763_780_000_123)
    }

    @Test func deadLetters() throws {
        let message = try DeadLetter.decode(from: example("push.dlq-message.json"))
        #expect(message.original == Data("{not json".utf8))
        #expect(message.source == DeadLetter.Source(topic: "push.jobs", partition: 2, offset: 17))
        let notification = try DeadLetter.decode(from: example("push.dlq-notification.json"))
        #expect(notification.status == 400)
        #expect(notification.jobID == "campaign-7")
    }
}
