import APNsCore
import APNsSimulator
import EmbeddedKafka
import EmbeddedStack
import Foundation
import Kafka
import PipelineTestSupport
import PushAPI
import PushConfiguration
import PushCore
import PushJobs
import PushStore
import Testing

/// Jobs through the HTTP API on the real stack: publishing with idempotency keys, status,
/// cancel, receipts, and jobs of one app invisible to another.
@Suite(.serialized) struct APIJobTests {
    static let app = EmbeddedStack.app

    static func pushBody(_ audience: JSONValue, throttle: JSONValue? = nil, name: JSONValue? = nil) -> JSONValue {
        var body: JSONObject = [
            "environment": "sandbox", "audience": audience,
            "notification": ["aps": ["alert": "hello"]], "headers": ["push-type": "alert"],
        ]
        if let throttle { body["throttle"] = throttle }
        if let name { body["name"] = name }
        return .object(body)
    }

    @Test func aSendAtEachDevicesTimeIsAcceptedAndShownAndABadOneNamed() async throws {
        try await PipelineStack.with { stack in
            let tokens = (0..<40).map(PipelineStack.token)
            try await stack.register(tokens)
            try await stack.withAPI { api, _ in
                let push = "/v1/apps/\(Self.app)/push"
                for (sendAt, field) in [
                    (["local-time": "7:00"] as JSONValue, "send-at.local-time"), (["best-hour": ["within": "0h"]], "send-at.best-hour.within"),
                    (["local-time": "07:00", "best-hour": ["within": "24h"]], "send-at"),
                ] {
                    guard case .object(var body) = Self.pushBody(["broadcast": true]) else { return }
                    body["send-at"] = sendAt
                    let refused = try await api.request("POST", push, json: .object(body))
                    #expect(refused.status == 400 && refused.errorField == field, "\(sendAt): \(refused.json ?? .null)")
                }
                // Two hours from now in UTC, the app's zone: the whole broadcast waits for one quarter.
                var utc = Calendar(identifier: .gregorian)
                utc.timeZone = TimeZone(identifier: "UTC")!
                let hour = utc.component(.hour, from: Date().addingTimeInterval(7_200))
                guard case .object(var body) = Self.pushBody(["broadcast": true]) else { return }
                body["send-at"] = ["local-time": .string(String(format: "%02d:00", hour))]
                let accepted = try await api.request("POST", push, json: .object(body))
                #expect(accepted.status == 202)
                let jobID = try #require(accepted.json?.objectValue?["job"]?.stringValue)
                let status = try await eventually("the broadcast parked") {
                    try await api.request("GET", "/v1/apps/\(Self.app)/jobs/\(jobID)").json?.objectValue ?? [:]
                } until: {
                    $0["expanded"]?.intValue == tokens.count && $0["send-times"]?.arrayValue?.count == 1
                }
                let time = try #require(status["send-times"]?.arrayValue?.first?.objectValue)
                #expect(time["scheduled"]?.intValue == tokens.count && time["released"]?.intValue == 0)
                #expect(status["accepted"]?.intValue == 0 && status["state"] == "in-progress")
            }
        }
    }

    @Test func theSameIdempotencyKeyPublishesOnce() async throws {
        try await PipelineStack.with { stack in
            let tokens = (0..<300).map(PipelineStack.token)
            try await stack.register(tokens)
            try await stack.withAPI { api, _ in
                let body = Self.pushBody(["broadcast": true])
                let push = "/v1/apps/\(Self.app)/push"
                let first = try await api.request("POST", push, json: body, headers: ["Idempotency-Key": "campaign-1"])
                #expect(first.status == 202)
                let jobID = try #require(first.json?.objectValue?["job"]?.stringValue)
                #expect(first.json?.objectValue?["replayed"] == .bool(false))
                #expect(first.header("Location") == "/v1/apps/\(Self.app)/jobs/\(jobID)")

                let again = try await api.request("POST", push, json: body, headers: ["Idempotency-Key": "campaign-1"])
                #expect(again.status == 202)
                #expect(again.json?.objectValue?["job"]?.stringValue == jobID)
                #expect(again.json?.objectValue?["replayed"] == .bool(true))

                let changed = try await api.request(
                    "POST", push, json: Self.pushBody(["tokens": [.string(tokens[0].hex)]]), headers: ["Idempotency-Key": "campaign-1"])
                #expect(changed.status == 409)
                #expect(changed.errorField == "Idempotency-Key")

                let status = try await eventually("the campaign completes") {
                    try await api.request("GET", "/v1/apps/\(Self.app)/jobs/\(jobID)").json?.objectValue
                } until: {
                    $0?["state"]?.stringValue == "complete"
                }
                #expect(status?["accepted"]?.intValue == tokens.count)
                #expect(status?["targeted"]?.intValue == tokens.count)
                let counters = try await stack.simulator.counters()
                #expect(counters.accepted == tokens.count, "one set of notifications: each device once")
                #expect(counters.duplicates == 0)
                let admin = try KafkaAdmin(bootstrapServers: stack.kafka.bootstrapServers, logger: stack.logger)
                let messages = try await admin.highWatermarks(topic: PushTopic.jobs).values.reduce(0, +)
                #expect(messages == Int64(1 + stack.configuration.registry.shards), "the job and its shard tasks, once")

                // The payload the workers send carries the job id for receipts.
                let spec = try #require(try await stack.jobs.spec(jobID: jobID))
                let job = try PushJob.decodeAndValidate(from: Data(spec))
                #expect(job.notification.object["pushfleet"] == ["job": .string(jobID)])
                #expect(job.idempotencyKey == "campaign-1")
            }
        }
    }

    @Test func receiptsCountEachDeviceOnceAndJobsStayWithTheirApp() async throws {
        try await PipelineStack.with { stack in
            let tokens = (0..<5).map(PipelineStack.token)
            try await stack.register(tokens)
            try await stack.withAPI { api, _ in
                let answer = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push", json: Self.pushBody(["tokens": .array(tokens.map { .string($0.hex) })]))
                let jobID = try #require(answer.json?.objectValue?["job"]?.stringValue)
                let receipts = "/v1/apps/\(Self.app)/receipts"
                for (token, event) in [(0, "delivered"), (0, "delivered"), (1, "delivered"), (0, "opened"), (0, "opened")] {
                    let receipt = try await api.request(
                        "POST", receipts, json: ["job": .string(jobID), "token": .string(tokens[token].hex), "event": .string(event)])
                    #expect(receipt.status == 200)
                }
                let status = try await api.request("GET", "/v1/apps/\(Self.app)/jobs/\(jobID)").json?.objectValue
                #expect(status?["delivered"]?.intValue == 2)
                #expect(status?["opened"]?.intValue == 1)
                func deviceHours(_ token: DeviceToken) async throws -> [Int] {
                    let device = try await api.request("GET", "/v1/apps/\(Self.app)/devices/\(token.hex)").json?.objectValue
                    return device?["receipt-hours"]?.objectValue?["utc"]?.arrayValue?.compactMap(\.intValue) ?? []
                }
                // A job of listed tokens counts into no device's hours: a token may be one the
                // registry does not have, and nothing is kept for those.
                let stranger = PipelineStack.token(9)
                let unregistered = try await api.request(
                    "POST", receipts, json: ["job": .string(jobID), "token": .string(stranger.hex), "event": "delivered"])
                #expect(unregistered.json == ["counted": true])
                #expect(try await stack.registry.deviceTime(app: Self.app, token: stranger).receiptHours.total == 0)
                #expect(try await deviceHours(tokens[0]) == Array(repeating: 0, count: 24))
                // A broadcast's devices come from the registry: each counted receipt goes into its
                // device's hours, token 0 one of each event.
                let broadcast = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: Self.pushBody(["broadcast": true]))
                let broadcastID = try #require(broadcast.json?.objectValue?["job"]?.stringValue)
                for (token, event) in [(0, "delivered"), (0, "opened"), (0, "opened"), (1, "delivered")] {
                    let receipt = try await api.request(
                        "POST", receipts, json: ["job": .string(broadcastID), "token": .string(tokens[token].hex), "event": .string(event)])
                    #expect(receipt.status == 200)
                }
                for (token, counted) in [(0, 2), (1, 1), (2, 0)] {
                    let hours = try await deviceHours(tokens[token])
                    #expect(hours.count == 24 && hours.reduce(0, +) == counted, "token \(token)")
                }
                let repeated = try await api.request(
                    "POST", receipts, json: ["job": .string(jobID), "token": .string(tokens[1].hex), "event": "delivered"])
                #expect(repeated.json == ["counted": false])
                let unknown = try await api.request(
                    "POST", receipts, json: ["job": "no-such-job", "token": .string(tokens[1].hex), "event": "delivered"])
                #expect(unknown.status == 404)

                let otherKey = stack.stack.apiKeys[EmbeddedStack.otherApp]
                let other = EmbeddedStack.otherApp
                #expect(try await api.request("GET", "/v1/apps/\(other)/jobs/\(jobID)", key: otherKey).status == 404)
                #expect(try await api.request("POST", "/v1/apps/\(other)/jobs/\(jobID)/cancel", key: otherKey).status == 404)
                #expect(try await api.request("GET", "/v1/apps/\(Self.app)/jobs/\(jobID)", key: otherKey).status == 403)
                #expect(
                    try await api.request(
                        "POST", "/v1/apps/\(other)/receipts", json: ["job": .string(jobID), "token": .string(tokens[2].hex), "event": "delivered"],
                        key: otherKey
                    ).status == 404)
                #expect(try await stack.report(jobID).delivered == 3, "the stranger's too")
            }
        }
    }

    @Test func hourStatisticsCountSendsAndReceiptsByHourForTheAppAndTheTagsAJobAddressed() async throws {
        try await PipelineStack.with { stack in
            let fans = (0..<6).map(PipelineStack.token)
            let others = (6..<10).map(PipelineStack.token)
            try await stack.register(fans, tags: ["fans"])
            try await stack.register(others)
            try await stack.withAPI { api, _ in
                let utc = TimeZone(identifier: "UTC")!
                let before = LocalHour(Date(), in: utc)
                var jobs: [String] = []
                for (audience, name) in [(["tags": ["any": ["fans"]]], "Fans only"), (["broadcast": true], nil)] as [(JSONValue, String?)] {
                    let answer = try await api.request(
                        "POST", "/v1/apps/\(Self.app)/push", json: Self.pushBody(audience, name: name.map(JSONValue.string)))
                    let jobID = try #require(answer.json?.objectValue?["job"]?.stringValue)
                    let status = try await eventually("job \(jobID) completes") {
                        try await api.request("GET", "/v1/apps/\(Self.app)/jobs/\(jobID)").json?.objectValue
                    } until: {
                        $0?["state"]?.stringValue == "complete"
                    }
                    #expect(status?["name"] == name.map(JSONValue.string) ?? .null, "a campaign's report carries its name")
                    jobs.append(jobID)
                }
                let badName = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: Self.pushBody(["broadcast": true], name: "bell\u{7}"))
                #expect(badName.status == 400)
                #expect(badName.errorField == "name")
                let receipts = "/v1/apps/\(Self.app)/receipts"
                // The tag job: 3 delivered (one twice: counted once), 1 opened; the broadcast: 2 delivered.
                let posted: [(Int, DeviceToken, String)] = [
                    (0, fans[0], "delivered"), (0, fans[0], "delivered"), (0, fans[1], "delivered"), (0, fans[2], "delivered"),
                    (0, fans[0], "opened"), (1, others[0], "delivered"), (1, fans[3], "delivered"),
                ]
                for (job, token, event) in posted {
                    let answer = try await api.request(
                        "POST", receipts, json: ["job": .string(jobs[job]), "token": .string(token.hex), "event": .string(event)])
                    #expect(answer.status == 200)
                }
                let after = LocalHour(Date(), in: utc)

                func totals(_ query: String) async throws -> (sent: Int, delivered: Int, opened: Int, hours: Set<[Int]>) {
                    let answer = try await api.request("GET", "/v1/apps/\(Self.app)/stats/hours" + query)
                    #expect(answer.status == 200)
                    let cells = try #require(answer.json?.objectValue?["hours"]?.arrayValue)
                    #expect(cells.count == 168)
                    var sums = (sent: 0, delivered: 0, opened: 0, hours: Set<[Int]>())
                    for cell in cells.compactMap(\.objectValue) {
                        let (sent, delivered, opened) = (cell["sent"]?.intValue ?? 0, cell["delivered"]?.intValue ?? 0, cell["opened"]?.intValue ?? 0)
                        sums.sent += sent
                        sums.delivered += delivered
                        sums.opened += opened
                        if sent + delivered + opened > 0 {
                            sums.hours.insert([cell["weekday"]?.intValue ?? 0, cell["hour"]?.intValue ?? 0])
                        }
                    }
                    return sums
                }
                let app = try await totals("")
                #expect(app.sent == fans.count + fans.count + others.count)
                #expect(app.delivered == 5)
                #expect(app.opened == 1)
                #expect(app.hours.isSubset(of: [[before.weekday, before.hour], [after.weekday, after.hour]]))
                let tag = try await totals("?tag=fans&days=1")
                #expect(tag.sent == fans.count, "only the job that addressed the tag")
                #expect(tag.delivered == 3)
                #expect(tag.opened == 1)
                #expect(try await totals("?tag=nobody").sent == 0)

                let refused = try await api.request("GET", "/v1/apps/\(Self.app)/stats/hours?days=91")
                #expect(refused.status == 400)
                #expect(refused.errorField == "days")
            }
        }
    }

    @Test func aCancelledJobStopsSending() async throws {
        try await PipelineStack.with { stack in
            let tokens = (0..<400).map(PipelineStack.token)
            try await stack.register(tokens)
            try await stack.withAPI { api, _ in
                // Slow on purpose: 20 notifications, then a 100 ms pause, so the cancel lands mid-way.
                let answer = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push",
                    json: Self.pushBody(["broadcast": true], throttle: ["sleep-after": 20, "sleep-ms": 100]))
                let jobID = try #require(answer.json?.objectValue?["job"]?.stringValue)
                _ = try await eventually("some notifications are accepted") {
                    try await stack.report(jobID).accepted
                } until: {
                    $0 >= 20
                }
                let cancelled = try await api.request("POST", "/v1/apps/\(Self.app)/jobs/\(jobID)/cancel")
                #expect(cancelled.status == 200)
                #expect(cancelled.json?.objectValue?["state"]?.stringValue == "cancelled")

                let report = try await eventually("every token has its outcome") {
                    try await stack.report(jobID)
                } until: {
                    $0.isComplete
                }
                #expect(report.cancelled > 0, "the rest of the audience is settled as cancelled")
                #expect(report.accepted + report.cancelled == tokens.count)
                #expect(report.accepted < tokens.count)
                #expect(try await stack.simulator.counters().accepted == report.accepted, "nothing cancelled reaches APNs")
                #expect(try await api.request("POST", "/v1/apps/\(Self.app)/jobs/\(jobID)/cancel").status == 200, "cancelling again is harmless")

                let small = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: Self.pushBody(["tokens": [.string(tokens[0].hex)]]))
                let smallID = try #require(small.json?.objectValue?["job"]?.stringValue)
                _ = try await eventually("the small job completes") {
                    try await stack.report(smallID)
                } until: {
                    $0.isComplete
                }
                let late = try await api.request("POST", "/v1/apps/\(Self.app)/jobs/\(smallID)/cancel")
                #expect(late.status == 409)
            }
        }
    }

    @Test("a job cancelled before its audience is read completes its report: the unread audience counts as cancelled")
    func aJobCancelledBeforeExpansionCompletesItsReport() async throws {
        try await PipelineStack.with { stack in
            let tokens = (0..<300).map(PipelineStack.token)
            try await stack.register(tokens)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            // A list job cancelled before any worker read it: nothing targeted, nothing sent.
            let listJob = PipelineStack.job(id: "cancelled-list", audience: .tokens(Array(tokens.prefix(10))))
            #expect(try await stack.jobs.cancel(jobID: "cancelled-list", at: now))
            // A broadcast whose shard tasks all meet the cancel (as when the cancel lands between
            // the job's fan-out and its shard scans): every shard is counted, none published.
            let broadcast = PipelineStack.job(id: "cancelled-broadcast", audience: .broadcast)
            #expect(try await stack.jobs.cancel(jobID: "cancelled-broadcast", at: now))
            let taskCount = try await stack.registry.layout(app: PipelineStack.app).taskCount
            try await stack.withWorker { _ in
                try await stack.publish(listJob)
                for shard in 0..<taskCount {
                    let task = ShardTask(shard: shard, of: taskCount)
                    _ = try await stack.producer.send(
                        KafkaProducerMessage(
                            topic: PushTopic.jobs, key: Array("cancelled-broadcast/s\(shard)".utf8), value: Array(broadcast.jsonData()),
                            headers: [KafkaHeader(name: PushMessageHeader.shard, value: Array(task.description.utf8))]))
                }
                let list = try await eventually("the cancelled list job's report completes") {
                    try await stack.report("cancelled-list")
                } until: {
                    $0.isComplete
                }
                #expect(list.targeted == 0 && list.expanded == 0 && list.state == .cancelled)
                let report = try await eventually("every shard of the cancelled broadcast is counted") {
                    try await stack.report("cancelled-broadcast")
                } until: {
                    $0.shardsDone == taskCount
                }
                #expect(report.targeted == tokens.count)
                #expect(report.cancelled == tokens.count)
                #expect(report.expanded == 0)
                #expect(report.finished == tokens.count)
            }
            #expect(try await stack.simulator.counters().accepted == 0, "nothing of a cancelled job reaches APNs")
        }
    }

    @Test func aJobTooLargeForOneKafkaMessageIs413() async throws {
        try await PipelineStack.with { stack in
            try await stack.withAPI { api, _ in
                // 6,000 tokens of 200 hex digits: 1.2 MB, under the body limit, over one message.
                let tokens = (0..<6_000).map { JSONValue.string(String(repeating: "ab", count: 92) + String(format: "%016x", $0)) }
                let answer = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: Self.pushBody(["tokens": .array(tokens)]))
                #expect(answer.status == 413)
                #expect(answer.errorCode == "payload-too-large")
                #expect(answer.errorField == "audience")
                let admin = try KafkaAdmin(bootstrapServers: stack.kafka.bootstrapServers, logger: stack.logger)
                #expect(try await admin.highWatermarks(topic: PushTopic.jobs).values.reduce(0, +) == 0, "nothing published")
            }
        }
    }
}
