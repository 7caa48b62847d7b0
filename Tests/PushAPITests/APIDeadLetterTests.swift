import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import Kafka
import PipelineTestSupport
import PushAPI
import PushCore
import PushJobs
import Testing

/// Dead letters read back through the API on the real stack: a job's notifications given up on
/// under the job, a malformed job published straight to Kafka under its app, another app's job
/// not found, and the `limit` checked.
@Suite(.serialized) struct APIDeadLetterTests {
    static let app = EmbeddedStack.app

    @Test func deadLettersAreListedUnderTheirJobAndTheirApp() async throws {
        var options = PipelineStack.Options()
        // One attempt: the first 503 is final, so each notification is dead-lettered at once.
        options.resendSettings = ["base-delay-ms: 20", "max-delay-ms: 500", "max-attempts: 1"]
        try await PipelineStack.with(options, simulator: { $0.faults.serviceUnavailableRate = 1 }) { stack in
            let tokens = (0..<3).map(PipelineStack.token)
            try await stack.register(tokens)
            try await stack.withAPI { api, _ in
                let answer = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push",
                    json: [
                        "environment": "sandbox", "audience": ["tokens": .array(tokens.map { .string($0.hex) })],
                        "notification": ["aps": ["alert": "hello"]], "headers": ["push-type": "alert"],
                    ])
                let jobID = try #require(answer.json?.objectValue?["job"]?.stringValue)
                let report = try await eventually("the job completes") {
                    try await stack.report(jobID)
                } until: {
                    $0.isComplete
                }
                #expect(report.deadLettered == tokens.count, "\(report)")

                let path = "/v1/apps/\(Self.app)/jobs/\(jobID)/dead-letters"
                let listed = try await api.request("GET", path)
                #expect(listed.status == 200, "\(String(decoding: listed.body, as: UTF8.self))")
                let body = try #require(listed.json?.objectValue)
                #expect(Set(body.keys) == ["job", "total", "letters"])
                #expect(body["job"]?.stringValue == jobID)
                #expect(body["total"]?.intValue == tokens.count)
                let letters = try Self.letters(body)
                #expect(letters.count == tokens.count)
                #expect(Set(letters.compactMap(\.token)) == Set(tokens.map(\.hex)))
                #expect(letters.allSatisfy { $0.reason == "resend-expired" && $0.jobID == jobID && $0.app == Self.app })
                #expect(letters.allSatisfy { $0.message.contains("ServiceUnavailable") }, "\(letters.map(\.message))")
                #expect(letters.map(\.deadLetteredAt) == letters.map(\.deadLetteredAt).sorted(by: >), "newest first")
                let one = try await api.request("GET", "\(path)?limit=1")
                #expect(try Self.letters(try #require(one.json?.objectValue)) == [letters[0]])

                // A job published straight to Kafka that fails validation: its app's, with its id.
                let malformed =
                    #"{"id":"bad-job","app":"news","environment":"sandbox","audience":{"tokens":["xyz"]},"notification":{"aps":{"alert":"x"}},"headers":{"push-type":"alert"}}"#
                try await stack.publish(raw: Array(malformed.utf8), key: "bad-job")
                let appLetters = try await eventually("the malformed job is listed under its app") {
                    try Self.letters(try #require(try await api.request("GET", "/v1/apps/\(Self.app)/dead-letters").json?.objectValue))
                } until: {
                    !$0.isEmpty
                }
                let bad = try #require(appLetters.first)
                #expect(appLetters.count == 1, "the notifications' letters are their job's only: \(appLetters)")
                #expect(bad.reason == "invalid-token" && bad.field == "audience.tokens[0]")
                #expect(bad.jobID == "bad-job" && bad.app == Self.app)
                #expect(bad.source?.topic == PushTopic.jobs && bad.original == Data(malformed.utf8))
                let app = try await api.request("GET", "/v1/apps/\(Self.app)/dead-letters")
                #expect(app.json?.objectValue?["app"]?.stringValue == Self.app)
                #expect(try await api.request("GET", "/v1/apps/\(Self.app)/jobs/bad-job/dead-letters").status == 404, "never stored")
                // push.dlq carries the same letter, named the same way.
                let published = try await stack.readTopic(PushTopic.deadLetters, count: tokens.count + 1)
                    .map { try DeadLetter.decode(from: Data($0.value)) }
                #expect(published.first { $0.reason == "invalid-token" } == bad)

                // Another app's job is not found; another app has no letters of this one.
                let other = EmbeddedStack.otherApp
                let otherKey = stack.stack.apiKeys[other]
                let foreign = try await api.request("GET", "/v1/apps/\(other)/jobs/\(jobID)/dead-letters", key: otherKey)
                #expect(foreign.status == 404 && foreign.errorField == "job")
                let otherLetters = try await api.request("GET", "/v1/apps/\(other)/dead-letters", key: otherKey)
                #expect(otherLetters.status == 200 && otherLetters.json?.objectValue?["letters"] == .array([]))

                for bad in ["0", "1001", "x"] {
                    let refused = try await api.request("GET", "\(path)?limit=\(bad)")
                    #expect(refused.status == 400 && refused.errorField == "limit", "limit=\(bad)")
                    let appRefused = try await api.request("GET", "/v1/apps/\(Self.app)/dead-letters?limit=\(bad)")
                    #expect(appRefused.status == 400 && appRefused.errorField == "limit", "limit=\(bad)")
                }
            }
        }
    }

    /// The `letters` of an answer, decoded as `push.dlq`'s letters.
    static func letters(_ body: JSONObject) throws -> [DeadLetter] {
        try #require(body["letters"]?.arrayValue).map { try DeadLetter.decode(from: $0.compactData()) }
    }
}
