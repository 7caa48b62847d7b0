import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import Kafka
import PipelineTestSupport
import PushAPI
import PushConfiguration
import PushCore
import PushJobs
import PushPipeline
import PushStore
import Redis
import Testing

/// What operators do to running jobs through the HTTP API (pause, resume, rate, abort), a
/// refusal of the whole request pausing a job at once, topics checked at the door, and errors
/// that stop being retried.
@Suite("Job control through the API", .serialized)
struct APIJobControlTests {
    static let app = EmbeddedStack.app

    static func pushBody(_ audience: JSONValue, headers: JSONValue = ["push-type": "alert"], throttle: JSONValue? = nil) -> JSONValue {
        var body: JSONObject = [
            "environment": "sandbox", "audience": audience, "notification": ["aps": ["alert": "hello"]], "headers": headers,
        ]
        if let throttle { body["throttle"] = throttle }
        return .object(body)
    }

    @Test("pause stops a running job fleet-wide, its rate changes live, resume finishes it: nothing missed, nothing twice")
    func pauseRateResume() async throws {
        let tokens = (0..<5_000).map(PipelineStack.token)
        try await PipelineStack.with { stack in
            try await stack.register(tokens)
            let jobID = try await stack.withAPI { api, _ in
                let answer = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push", json: Self.pushBody(["broadcast": true], throttle: ["rate-per-second": 1_000]))
                let jobID = try #require(answer.json?.objectValue?["job"]?.stringValue)
                let path = "/v1/apps/\(Self.app)/jobs/\(jobID)"
                _ = try await eventually("the campaign to be under way") {
                    try await stack.report(jobID).accepted
                } until: {
                    $0 >= 500
                }

                let notPaused = try await api.request("POST", "\(path)/resume")
                #expect(notPaused.status == 409 && notPaused.errorCode == "not-paused" && notPaused.errorField == "job")
                let paused = try await api.request("POST", "\(path)/pause", json: ["reason": "checking the copy"])
                #expect(paused.status == 200)
                let status = paused.json?.objectValue
                #expect(status?["state"]?.stringValue == "paused")
                #expect(status?["stopped"]?.objectValue?["reason"]?.stringValue == "checking the copy")
                #expect(status?["stopped"]?.objectValue?["by"]?.stringValue == "operator")
                #expect(try await api.request("POST", "\(path)/pause").status == 200, "pausing again is harmless")
                return jobID
            }
            // The worker stopped: nothing more of the campaign can be in flight.
            let notSentBeforePause = coverage(of: tokens, try await stack.simulator.counters()).missed.count
            #expect(notSentBeforePause > 0, "the campaign was stopped part-way")

            try await stack.withAPI { api, _ in
                let path = "/v1/apps/\(Self.app)/jobs/\(jobID)"
                _ = try await stack.requestsAfterMarkerJob()
                #expect(
                    coverage(of: tokens, try await stack.simulator.counters()).missed.count == notSentBeforePause,
                    "a new worker leaves a paused job alone")

                #expect(try await api.request("PUT", "\(path)/rate", json: ["rate-per-second": 0]).errorField == "rate-per-second")
                #expect(try await api.request("PUT", "\(path)/rate", json: ["rate": 5]).status == 400)
                let rate = try await api.request("PUT", "\(path)/rate", json: ["rate-per-second": 4_000])
                #expect(rate.status == 200)
                #expect(rate.json?.objectValue?["rate-per-second"]?.intValue == 4_000)
                #expect(try await stack.jobs.control(jobID: jobID).ratePerSecond == 4_000)

                let resumed = try await api.request("POST", "\(path)/resume")
                #expect(resumed.status == 200 && resumed.json?.objectValue?["state"]?.stringValue == "in-progress")
                let done = try await eventually("the resumed campaign to finish") {
                    try await stack.report(jobID)
                } until: {
                    $0.isComplete
                }
                #expect(done.accepted == tokens.count)
                let (missed, sentTwice) = coverage(of: tokens, try await stack.simulator.counters())
                print(
                    "pause/resume: \(tokens.count - notSentBeforePause) sent before the pause; \(missed.count) missed, \(sentTwice) sent twice, \(done.duplicatesSkipped) skipped by markers"
                )
                #expect(missed.isEmpty && sentTwice == 0, "\(missed.count) missed, \(sentTwice) sent twice")
                let late = try await api.request("POST", "\(path)/abort")
                #expect(late.status == 409, "a complete job has nothing left to abort")
            }
        }
    }

    @Test("a refusal of the whole request (TopicDisallowed) pauses the job at once; abort ends it; nothing touches the registry")
    func requestRefusalPausesAtOnce() async throws {
        let tokens = (0..<3_000).map(PipelineStack.token)
        var options = PipelineStack.Options()
        // An extra topic the app may address, but the team's key may not push to.
        options.appSettings = ["extra-topics: [com.example.elsewhere]"]
        try await PipelineStack.with(options) { stack in
            try await stack.register(tokens)
            let jobID = try await stack.withAPI { api, counters in
                let answer = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push",
                    json: Self.pushBody(["broadcast": true], headers: ["push-type": "alert", "topic": "com.example.elsewhere"]))
                #expect(answer.status == 202)
                let jobID = try #require(answer.json?.objectValue?["job"]?.stringValue)
                let paused = try await eventually("the job to be paused") {
                    try await api.request("GET", "/v1/apps/\(Self.app)/jobs/\(jobID)").json?.objectValue
                } until: {
                    $0?["state"]?.stringValue == "paused"
                }
                #expect(paused?["stopped"]?.objectValue?["reason"]?.stringValue?.contains("TopicDisallowed") == true)
                #expect(paused?["stopped"]?.objectValue?["by"]?.stringValue == "breaker")
                #expect(paused?["failed"]?.intValue == 0, "refused notifications keep no outcome: they are sent again if the job resumes")
                #expect(paused?["dead-lettered"]?.intValue == 0)
                #expect(counters[.jobsPaused] == 1)
                return jobID
            }
            // The worker stopped: this is all the job sent. One worker: its in-flight window
            // (2,000) and an admission (250) per chunk in flight (4).
            let refused = try await stack.simulator.counters().rejections["TopicDisallowed"] ?? 0
            print("TopicDisallowed: paused after \(refused) of \(tokens.count) sends")
            #expect(refused <= 3_000, "stopped within the in-flight window")

            try await stack.withAPI { api, _ in
                let path = "/v1/apps/\(Self.app)/jobs/\(jobID)"
                let aborted = try await api.request("POST", "\(path)/abort", json: ["reason": "wrong topic"])
                #expect(aborted.status == 200)
                #expect(aborted.json?.objectValue?["state"]?.stringValue == "cancelled")
                #expect(aborted.json?.objectValue?["stopped"]?.objectValue?["reason"]?.stringValue == "wrong topic")
                let gone = try await api.request("POST", "\(path)/resume")
                #expect(gone.status == 409 && gone.errorCode == "cancelled")
                #expect(try await api.request("PUT", "\(path)/rate", json: ["rate-per-second": 10]).status == 409)
                _ = try await stack.requestsAfterMarkerJob()
                #expect(try await stack.simulator.counters().rejections["TopicDisallowed"] == refused, "nothing more is sent")
                #expect(try await stack.registry.deviceCount(app: Self.app) == DeviceCount(sandbox: tokens.count, production: 0))
            }
        }
    }

    @Test("a topic that is not the app's is refused at the door: the API and job validate name headers.topic, a worker dead-letters it")
    func topicAtTheDoor() async throws {
        try await PipelineStack.with { stack in
            let job = Self.pushBody(["broadcast": true], headers: ["push-type": "voip", "topic": "com.example.news"])
            try await stack.withAPI { api, _ in
                let answer = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: job)
                #expect(answer.status == 400)
                #expect(answer.errorField == "headers.topic" && answer.errorCode == "topic-not-allowed")
                #expect(answer.json?.objectValue?["error"]?.objectValue?["message"]?.stringValue?.contains("com.example.news.voip") == true)
                let production = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push",
                    json: .object([
                        "environment": "production", "audience": ["broadcast": true], "notification": ["aps": ["alert": "x"]],
                        "headers": ["push-type": "alert"],
                    ]))
                #expect(production.status == 400 && production.errorField == "environment", "news is enabled for the sandbox only")

                // The same job straight to Kafka: dead-lettered with the reason and the field.
                let direct = PushJob(
                    id: "wrong-topic", app: Self.app, environment: .sandbox, audience: .broadcast,
                    notification: APNsPayload(["aps": ["alert": "x"]]), headers: PushHeaders(pushType: .alert, topic: "com.example.shop"))
                try await stack.publish(direct)
                let letters = try await stack.readTopic(PushTopic.deadLetters, count: 1)
                let letter = try JSONValue(parsing: Data(try #require(letters.first).value)).objectValue
                #expect(letter?["reason"]?.stringValue == "topic-not-allowed")
                #expect(letter?["field"]?.stringValue == "headers.topic")
            }
            let file = stack.stack.directory.appendingPathComponent("job.json")
            var object = try #require(job.objectValue)
            object["app"] = .string(Self.app)
            try Data(JSONValue.object(object).compactData()).write(to: file)
            let withoutConfig = try await CLIProcess.run(["job", "validate", file.path])
            #expect(withoutConfig.status == 0, "without a configuration only the job's own rules are checked")
            let checked = try await CLIProcess.run(["job", "validate", "--config", stack.configurationPath, "--json", file.path])
            #expect(checked.status == 1)
            #expect(checked.standardOutput.contains(#""field":"headers.topic""#), "\(checked.standardOutput)")
            #expect(checked.standardOutput.contains(#""code":"topic-not-allowed""#))
        }
    }

    @Test("an error retrying cannot fix (WRONGTYPE) dead-letters the message after a few attempts; the worker goes on")
    func permanentErrorsStopRetrying() async throws {
        let tokens = (0..<100).map(PipelineStack.token)
        try await PipelineStack.with { stack in
            try await stack.register(tokens)
            // The job's statistics key holds a string: every write to it is a WRONGTYPE error.
            _ = try await stack.redis.send("SET", "pf:{job:broken}:stats", "not a hash")
            try await stack.withWorker { counters in
                try await stack.publish(PipelineStack.job(id: "broken", audience: .tokens(Array(tokens.prefix(10)))))
                try await stack.publish(PipelineStack.job(id: "healthy", audience: .broadcast))
                let letters = try await stack.readTopic(PushTopic.deadLetters, count: 1)
                let letter = try JSONValue(parsing: Data(try #require(letters.first).value)).objectValue
                #expect(letter?["reason"]?.stringValue == "processing-failed")
                #expect(letter?["message"]?.stringValue?.contains("WRONGTYPE") == true, "\(letter ?? [:])")
                let healthy = try await eventually("the next job to finish") {
                    try await stack.report("healthy")
                } until: {
                    $0.isComplete
                }
                #expect(healthy.accepted == tokens.count)
                #expect(counters[.deadLetteredMessages] == 1)
            }
        }
    }
}
