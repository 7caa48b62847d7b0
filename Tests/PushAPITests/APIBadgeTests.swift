import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushAPI
import PushCore
import PushJobs
import PushPipeline
import PushStore
import Testing

/// Badges the server keeps, end to end through the API against the simulator: each device's
/// notification carries its own number, a campaign counts a device once, and the app's reset is
/// what the next campaign counts from.
@Suite("Server-kept badges through the API", .serialized)
struct APIBadgeTests {
    static let app = EmbeddedStack.app

    /// Per device token (hex): the `aps.badge` of each accepted request the simulator recorded.
    static func badges(_ records: [APNsSimulatorRequestRecord]) -> [String: [Int]] {
        var badges: [String: [Int]] = [:]
        for record in records where record.status == 200 {
            guard let token = record.deviceToken, let payload = record.payload,
                let json = try? JSONValue(parsing: Data(payload.utf8)),
                let badge = json.objectValue?["aps"]?.objectValue?["badge"]?.intValue
            else { continue }
            badges[token, default: []].append(badge)
        }
        return badges
    }

    static func campaign(_ badge: JSONValue, audience: JSONValue = ["broadcast": true]) -> JSONValue {
        [
            "environment": "sandbox", "audience": audience, "notification": ["aps": ["alert": "New messages", "badge": badge]],
            "headers": ["push-type": "alert"],
        ]
    }

    @Test("each device's notification carries its own number; a second campaign counts on; the app's reset is counted from")
    func campaignsCountEachDevice() async throws {
        let tokens = (0..<300).map(PipelineStack.token)
        try await PipelineStack.with(simulator: { $0.recordsRequests = true }) { stack in
            try await stack.register(tokens)
            try await stack.withAPI { api, _ in
                let path = { (token: DeviceToken) in "/v1/apps/\(Self.app)/devices/\(token.hex)/badge" }
                // Device 0 shows 5 already (set by the app); the others have none.
                let set = try await api.request("PUT", path(tokens[0]), json: ["badge": 5])
                #expect(set.status == 200 && set.json?.objectValue?["badge"]?.intValue == 5)

                func run(_ badge: JSONValue) async throws -> [String: [Int]] {
                    try await stack.simulator.reset()
                    let (_, report) = try await stack.publishAndFinish(Self.campaign(badge), through: api)
                    #expect(report.accepted == tokens.count)
                    return Self.badges(try await stack.simulator.requestRecords())
                }

                let first = try await run(["increment": 1])
                #expect(first[tokens[0].hex] == [6])
                let others = tokens.dropFirst().filter { first[$0.hex] != [1] }
                #expect(others.isEmpty, "\(others.count) devices did not get badge 1 (once)")

                let read = try await api.request("GET", path(tokens[1]))
                #expect(read.status == 200 && read.json?.objectValue?["badge"]?.intValue == 1)
                // Device 1's app was opened: its badge goes back to 0.
                let reset = try await api.request("PUT", path(tokens[1]), json: ["badge": 0])
                #expect(reset.status == 200)

                let second = try await run(["increment": 2])
                #expect(second[tokens[0].hex] == [8])
                #expect(second[tokens[1].hex] == [2])
                #expect(second[tokens[2].hex] == [3])

                let third = try await run(["set": 0])
                #expect(tokens.allSatisfy { third[$0.hex] == [0] }, "a set rule gives every device the number")
                let after = try await api.request("GET", path(tokens[2]))
                #expect(after.json?.objectValue?["badge"]?.intValue == 0)
            }
        }
    }

    @Test("bad badge input: a clear 4xx naming the field, nothing changed")
    func badInput() async throws {
        let token = PipelineStack.token(1)
        try await PipelineStack.with { stack in
            try await stack.register([token])
            try await stack.withAPI { api, _ in
                let path = "/v1/apps/\(Self.app)/devices/\(token.hex)/badge"
                for body: JSONValue in [["badge": 65_536], ["badge": -1], ["badge": "3"], [:], ["badge": 1, "other": 2]] {
                    let answer = try await api.request("PUT", path, json: body)
                    #expect(answer.status == 400, "\(body)")
                    #expect(answer.errorField == (body.objectValue?["other"] != nil ? "other" : "badge"), "\(body)")
                }
                let unknown = try await api.request("PUT", "/v1/apps/\(Self.app)/devices/\(PipelineStack.token(2).hex)/badge", json: ["badge": 1])
                #expect(unknown.status == 404 && unknown.errorField == "token")
                let unchanged = try await api.request("GET", path)
                #expect(unchanged.json?.objectValue?["badge"]?.intValue == 0)

                // A kept badge needs registered devices: a token list is refused at publication.
                let listed = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push", json: Self.campaign(["increment": 1], audience: ["tokens": [.string(token.hex)]]))
                #expect(listed.status == 400 && listed.errorField == "notification.aps.badge")
                let zero = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: Self.campaign(["increment": 0]))
                #expect(zero.status == 400 && zero.errorField == "notification.aps.badge.increment")
                let both = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: Self.campaign(["increment": 1, "set": 2]))
                #expect(both.status == 400 && both.errorField == "notification.aps.badge")
            }
        }
    }

    @Test("a campaign cancelled midway leaves a count exactly on the devices that got its notification")
    func cancelledMidway() async throws {
        let tokens = (0..<4_000).map(PipelineStack.token)
        try await PipelineStack.with(simulator: { $0.recordsRequests = true }) { stack in
            try await stack.register(tokens)
            try await stack.withAPI { api, _ in
                var campaign = try #require(Self.campaign(["increment": 1]).objectValue)
                campaign["throttle"] = ["rate-per-second": 1_000]
                let body = JSONValue.object(campaign)
                let published = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: body)
                let job = try #require(published.json?.objectValue?["job"]?.stringValue)
                _ = try await eventually("the campaign to be under way") {
                    try await stack.report(job).accepted
                } until: {
                    $0 >= 1_000
                }
                let abort = try await api.request("POST", "/v1/apps/\(Self.app)/jobs/\(job)/abort")
                #expect(abort.status == 200, "\(String(decoding: abort.body, as: UTF8.self))")
                let report = try await eventually("the campaign's report to complete") {
                    try await stack.report(job)
                } until: {
                    $0.isComplete
                }
                _ = try await stack.requestsAfterMarkerJob()
                let seen = Self.badges(try await stack.simulator.requestRecords())
                let reached = tokens.filter { seen[$0.hex] != nil }
                print("cancelled midway: \(reached.count) of \(tokens.count) devices got the campaign")
                #expect(reached.count >= 1_000 && reached.count < tokens.count, "cancelled midway: \(reached.count)")
                #expect(report.accepted == reached.count && report.cancelled == tokens.count - reached.count, "\(report.lines)")
                #expect(tokens.allSatisfy { seen[$0.hex] == nil || seen[$0.hex] == [1] })
                let badges = BadgeStore(client: stack.redis)
                let ids = try await stack.registry.deviceIDs(app: Self.app, tokens: tokens)
                var wrong = 0
                for (token, id) in zip(tokens, ids) {
                    let badge = try await badges.badge(app: Self.app, device: try #require(id))
                    if badge != (seen[token.hex] == nil ? 0 : 1) { wrong += 1 }
                }
                #expect(wrong == 0, "\(wrong) devices have a count without the notification, or the notification without a count")
            }
        }
    }

    @Test("with 10% of requests answered 503, each device's accepted notification carries its one count, resends included")
    func retriesAndResendsCarryTheNumber() async throws {
        let tokens = (0..<2_000).map(PipelineStack.token)
        // 20 attempts: a token that fails every one would be dead-lettered (10^-20).
        var options = PipelineStack.Options()
        options.resendSettings.append("max-attempts: 20")
        try await PipelineStack.with(
            options,
            simulator: {
                $0.recordsRequests = true
                $0.faults.serviceUnavailableRate = 0.1
            }
        ) { stack in
            try await stack.register(tokens)
            let badges = BadgeStore(client: stack.redis)
            let ids = try await stack.registry.deviceIDs(app: Self.app, tokens: tokens).map { try #require($0) }
            try await badges.set(app: Self.app, device: ids[0], to: 5)
            var job = PipelineStack.job(id: "flaky", audience: .broadcast)
            job.notification = APNsPayload(["aps": ["alert": "New messages", "badge": ["increment": 1]]])
            try await stack.withWorker { counters in
                try await stack.publish(job)
                _ = try await eventually("every device's notification accepted") {
                    try await stack.report("flaky")
                } until: {
                    $0.isComplete && $0.accepted == tokens.count
                }
                #expect(counters[.resent] > 0, "some notifications went through the resend buffer")
                _ = try await stack.requestsAfterMarkerJob()
            }
            let seen = Self.badges(try await stack.simulator.requestRecords())
            #expect(seen[tokens[0].hex] == [6])
            let wrong = tokens.dropFirst().filter { seen[$0.hex] != [1] }
            #expect(wrong.isEmpty, "\(wrong.count) devices did not get badge 1 exactly once")
            #expect(try await badges.badge(app: Self.app, device: ids[0]) == 6)
            #expect(try await badges.badge(app: Self.app, device: ids[1_999]) == 1)
        }
    }

    @Test("devices a worker counted and sent before it died are not counted again when their chunk is sent again")
    func countedOnceAcrossACrash() async throws {
        let tokens = (0..<200).map(PipelineStack.token)
        try await PipelineStack.with(simulator: { $0.recordsRequests = true }) { stack in
            try await stack.register(tokens)
            let badges = BadgeStore(client: stack.redis)
            let ids = try await stack.registry.deviceIDs(app: Self.app, tokens: tokens).map { try #require($0) }
            // What a killed worker leaves: the first 50 devices counted (and sent), no sent markers.
            let counted = try await badges.apply(.increment(1), app: Self.app, jobID: "crashed", devices: Array(ids.prefix(50)))
            #expect(counted.map(\.badge) == Array(repeating: 1, count: 50))
            var job = PipelineStack.job(id: "crashed", audience: .broadcast)
            job.notification = APNsPayload(["aps": ["alert": "New messages", "badge": ["increment": 1]]])
            try await stack.withWorker { _ in
                try await stack.publish(job)
                _ = try await eventually("the campaign to finish") {
                    try await stack.report("crashed")
                } until: {
                    $0.isComplete
                }
            }
            _ = try await stack.withWorker { _ in try await stack.requestsAfterMarkerJob() }
            let seen = Self.badges(try await stack.simulator.requestRecords())
            let wrong = tokens.filter { seen[$0.hex] != [1] }
            #expect(wrong.isEmpty, "\(wrong.count) devices did not get badge 1 exactly once")
            for id in ids.prefix(60) {
                #expect(try await badges.badge(app: Self.app, device: id) == 1)
            }
        }
    }
}
