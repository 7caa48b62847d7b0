import APNsCore
import Foundation
import PushCore
import Testing

/// Decoding through Foundation's `JSONDecoder` reports errors at the field's full path, built
/// from the decoder's coding path.
struct CodableBridgeTests {
    struct Batch: Decodable {
        let jobs: [PushJob]
    }

    @Test func errorPathIncludesTheCodingPath() throws {
        let bad = Fixtures.job.setting(["tokens": ["zz"]], at: ["audience"])
        let batch: JSONValue = ["jobs": [Fixtures.job, bad]]
        let error = #expect(throws: MessageValidationError.self) {
            try JSONDecoder().decode(Batch.self, from: batch.compactData())
        }
        #expect(error?.field == "jobs[1].audience.tokens[0]")
        #expect(error?.code == .invalidToken)
    }

    @Test func nestedModelsDecodeOnTheirOwn() throws {
        let headers = try JSONDecoder().decode(PushHeaders.self, from: Data(#"{"push-type":"voip","priority":5}"#.utf8))
        #expect(headers == PushHeaders(pushType: .voip, priority: .considerDevicePower))
        let error = #expect(throws: MessageValidationError.self) {
            try JSONDecoder().decode(PushHeaders.self, from: Data(#"{"push-type":"voip","prio":5}"#.utf8))
        }
        #expect(error?.field == "prio")
        let audience = try JSONDecoder().decode(Audience.self, from: Data(#"{"tags":{"any":["a"]}}"#.utf8))
        #expect(audience == .tags(TagExpression(any: ["a"])))
    }
}
