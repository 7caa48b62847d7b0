import Foundation
import PushCore
import Testing

@testable import PushPipeline

/// ``DeadLetter/naming(from:isConfiguredApp:)``: the app and job id an unprocessable message's
/// bytes name, no servers.
@Suite("Dead letters named by their message")
struct DeadLetterNamingTests {
    static let letter = DeadLetter(reason: "missing-field", message: "headers is required", field: "headers", deadLetteredAt: 1)

    static func named(_ json: String, _ letter: DeadLetter = letter) -> DeadLetter {
        letter.naming(from: Array(json.utf8)) { $0 == "news" }
    }

    @Test("a JSON object's string app (a configured one) and id name the letter")
    func namesAppAndJob() {
        let named = Self.named(#"{"id": "job-7", "app": "news", "audience": {"broadcast": true}}"#)
        #expect(named.app == "news" && named.jobID == "job-7")
        #expect(named.reason == Self.letter.reason && named.field == Self.letter.field)
        #expect(Self.named(#"{"app": "news"}"#).jobID == nil)
        #expect(Self.named(#"{"id": "job-7"}"#).app == nil)
    }

    @Test("nothing is taken that is not a configured app, a valid job id, a string, or from an object")
    func bestEffort() {
        #expect(Self.named(#"{"id": "job-7", "app": "elsewhere"}"#).app == nil, "not configured")
        #expect(Self.named(#"{"id": "job-7", "app": "elsewhere"}"#).jobID == "job-7")
        #expect(Self.named(#"{"id": "a{b}", "app": "news"}"#).jobID == nil, "not a job id the store takes")
        #expect(Self.named(#"{"id": "", "app": "news"}"#).jobID == nil)
        #expect(Self.named(#"{"id": "\#(String(repeating: "x", count: 129))"}"#).jobID == nil)
        #expect(Self.named(#"{"id": 7, "app": ["news"]}"#) == Self.letter)
        #expect(Self.named(#"[{"id": "job-7", "app": "news"}]"#) == Self.letter)
        #expect(Self.named("{not json") == Self.letter)
        #expect(Self.letter.naming(from: [0xFF, 0xFE, 0x00]) { _ in true } == Self.letter)
    }

    @Test("what the letter names already is kept")
    func keepsItsOwn() {
        var letter = Self.letter
        letter.app = "no-such-app"
        let named = Self.named(#"{"id": "job-7", "app": "news"}"#, letter)
        #expect(named.app == "no-such-app" && named.jobID == "job-7")
    }
}
