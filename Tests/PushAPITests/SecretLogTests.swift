import EmbeddedStack
import Foundation
import Logging
import PipelineTestSupport
import PushAPI
import PushCore
import PushJobs
import Synchronization
import Testing

/// Secrets stay secret: a campaign and the API at trace level, every log line of the worker,
/// the API, the Kafka clients, the embedded cluster and the simulator scanned for each secret.
@Suite("Secrets in logs")
struct SecretLogTests {
    @Test("no log line at trace level holds the provider key, an API key or the Redis password")
    func noSecretInAnyLogLine() async throws {
        let capture = LogCapture()
        var logger = Logger(label: "pushfleet.secrets") { label in CapturingLogHandler(label: label, capture: capture) }
        logger.logLevel = .trace
        var options = PipelineStack.Options()
        let redisPassword = "redis-secret-\(UUID().uuidString)"
        options.redisPassword = redisPassword
        var secrets: [String] = [redisPassword]
        try await PipelineStack.with(options, logger: logger) { stack in
            let keyPEM = try String(contentsOf: stack.stack.directory.appendingPathComponent("\(EmbeddedStack.app).p8"), encoding: .utf8)
            // Every line of the key's base64 body, and the whole body joined.
            let body = keyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
            secrets += body + [body.joined()]
            secrets += stack.stack.apiKeys.values
            secrets.append(stack.stack.deviceAPIKey)
            let tokens = (0..<20).map(PipelineStack.token)
            try await stack.register(tokens)
            try await stack.withAPI { api, _ in
                let answer = try await api.request(
                    "POST", "/v1/apps/\(EmbeddedStack.app)/push",
                    json: APIJobTests.pushBody(["broadcast": true]))
                let jobID = try #require(answer.json?.objectValue?["job"]?.stringValue, "\(answer)")
                _ = try await eventually("the campaign is accepted") {
                    try await stack.report(jobID)
                } until: {
                    $0.accepted == tokens.count
                }
                // Refusals are where a careless error message would echo a key.
                let wrong = try await api.request(
                    "GET", "/v1/apps/\(EmbeddedStack.app)/jobs/\(jobID)", key: "pf_wrong_" + (stack.stack.apiKeys[EmbeddedStack.app] ?? ""))
                #expect([401, 403].contains(wrong.status))
                let other = try await api.request(
                    "GET", "/v1/apps/\(EmbeddedStack.app)/jobs/\(jobID)", key: stack.stack.apiKeys[EmbeddedStack.otherApp])
                #expect(other.status == 403)
                for response in [wrong, other] {
                    let text = String(decoding: response.body, as: UTF8.self)
                    #expect(!secrets.contains { text.contains($0) }, "an error answer holds a secret: \(text)")
                }
            }
        }
        let lines = capture.lines
        // The scan saw the worker, the API, the Kafka clients and the simulator at work.
        for source in ["[PushPipeline]", "[PushAPI]", "[Kafka]", "[APNsSimulator]"] {
            #expect(lines.contains { $0.contains(source) }, "no log line from \(source)")
        }
        for secret in secrets where secret.count >= 16 {
            let leaks = lines.filter { $0.contains(secret) }
            #expect(leaks.isEmpty, "a secret in \(leaks.count) log line(s), the first: \(leaks.first ?? "")")
        }
    }
}
