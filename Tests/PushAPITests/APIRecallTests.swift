import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushAPI
import PushCore
import PushJobs
import PushStore
import Redis
import Testing

/// Recalling a campaign through the API, end to end against the simulator: the unsent part is
/// cancelled, each device that accepted it gets one withdraw (or the new content under the
/// campaign's collapse id), and both reports add up and name each other.
@Suite("Recall and overwrite through the API", .serialized)
struct APIRecallTests {
    static let app = EmbeddedStack.app

    /// Per device token (hex): the simulator's accepted requests of each push type.
    static func acceptedByType(_ records: [APNsSimulatorRequestRecord]) -> [String: [String: Int]] {
        var counts: [String: [String: Int]] = [:]
        for record in records where record.status == 200 {
            guard let token = record.deviceToken else { continue }
            counts[record.pushType ?? "", default: [:]][token, default: 0] += 1
        }
        return counts
    }

    @Test("a 10,000-device campaign recalled midway: its unsent part is never sent, each device that got it gets exactly one withdraw")
    func recallMidway() async throws {
        let tokens = (0..<10_000).map(PipelineStack.token)
        try await PipelineStack.with(simulator: { $0.recordsRequests = true }) { stack in
            try await stack.register(tokens)
            try await stack.withAPI { api, _ in
                let body: JSONValue = [
                    "environment": "sandbox", "audience": ["broadcast": true], "notification": ["aps": ["alert": "Flash sale"]],
                    "headers": ["push-type": "alert"], "throttle": ["rate-per-second": 2_000], "name": "Flash sale",
                ]
                let published = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: body)
                let campaign = try #require(published.json?.objectValue?["job"]?.stringValue)
                _ = try await eventually("the campaign to be under way") {
                    try await stack.report(campaign).accepted
                } until: {
                    $0 >= 2_000
                }
                let answer = try await api.request("POST", "/v1/apps/\(Self.app)/jobs/\(campaign)/recall")
                #expect(answer.status == 202, "\(String(decoding: answer.body, as: UTF8.self))")
                let recall = try #require(answer.json?.objectValue?["job"]?.stringValue)
                #expect(answer.json?.objectValue?["mode"]?.stringValue == "withdraw")
                #expect(answer.json?.objectValue?["recall-of"]?.stringValue == campaign)
                #expect(answer.json?.objectValue?["cancelled"] == .bool(true), "the campaign was still going")

                let again = try await api.request("POST", "/v1/apps/\(Self.app)/jobs/\(campaign)/recall")
                #expect(again.status == 409 && again.errorCode == "recalled-already" && again.errorField == "job")
                let ofRecall = try await api.request("POST", "/v1/apps/\(Self.app)/jobs/\(recall)/recall")
                #expect(ofRecall.status == 409 && ofRecall.errorCode == "recall-of-recall")

                let recalled = try await eventually("the recall to finish") {
                    try await stack.report(recall)
                } until: {
                    $0.isComplete
                }
                let stopped = try await eventually("the campaign's report to complete") {
                    try await stack.report(campaign)
                } until: {
                    $0.isComplete
                }
                _ = try await stack.requestsAfterMarkerJob()

                let byType = Self.acceptedByType(try await stack.simulator.requestRecords())
                let got = byType["alert", default: [:]]
                let withdraws = byType["background", default: [:]]
                let reached = tokens.filter { got[$0.hex, default: 0] > 0 }
                print("recall midway: \(reached.count) of \(tokens.count) devices got the campaign, \(withdraws.count) got a withdraw")
                #expect(reached.count >= 2_000 && reached.count < tokens.count, "recalled midway: \(reached.count)")
                #expect(tokens.allSatisfy { got[$0.hex, default: 0] <= 1 }, "no device got the campaign twice")
                let wrongWithdraws = tokens.filter { withdraws[$0.hex, default: 0] != (got[$0.hex, default: 0] > 0 ? 1 : 0) }
                #expect(wrongWithdraws.isEmpty, "\(wrongWithdraws.count) devices got a withdraw they should not have, or none, or two")

                #expect(stopped.control.state == .cancelled)
                #expect(stopped.accepted == reached.count)
                #expect(
                    stopped.targeted == tokens.count && stopped.accepted + stopped.cancelled == tokens.count,
                    "the campaign's report adds up: \(stopped.lines)")
                #expect(stopped.recalledBy == JobStore.RecallLink(jobID: recall, mode: .withdraw))
                #expect(recalled.targeted == reached.count && recalled.accepted == reached.count)
                #expect(recalled.recallOf == JobStore.RecallLink(jobID: campaign, mode: .withdraw))
                #expect(recalled.name == "Recall: Flash sale")

                let status = try await api.request("GET", "/v1/apps/\(Self.app)/jobs/\(campaign)")
                #expect(status.json?.objectValue?["recalled-by"]?.objectValue?["job"]?.stringValue == recall)
                let recallStatus = try await api.request("GET", "/v1/apps/\(Self.app)/jobs/\(recall)")
                #expect(recallStatus.json?.objectValue?["recall-of"]?.objectValue?["mode"]?.stringValue == "withdraw")
            }
        }
    }

    @Test("a recalled tag campaign reaches the devices that got it, also those that lost the tag since, not those that gained it")
    func tagCampaignRecallFollowsTheSentStateNotTheTag() async throws {
        let fans = (0..<200).map(PipelineStack.token)
        let others = (200..<300).map(PipelineStack.token)
        try await PipelineStack.with(simulator: { $0.recordsRequests = true }) { stack in
            try await stack.register(fans, tags: ["fans"])
            try await stack.register(others, tags: ["casual"])
            try await stack.withAPI { api, _ in
                let body: JSONValue = [
                    "environment": "sandbox", "audience": ["tags": ["any": ["fans"]]], "notification": ["aps": ["alert": "Derby day"]],
                    "headers": ["push-type": "alert"],
                ]
                let campaign = try #require(
                    try await api.request("POST", "/v1/apps/\(Self.app)/push", json: body).json?.objectValue?["job"]?.stringValue)
                _ = try await eventually("the campaign to finish") {
                    try await stack.report(campaign)
                } until: {
                    $0.isComplete
                }
                for token in fans.prefix(20) {
                    _ = try await stack.registry.removeTags(["fans"], app: Self.app, token: token)
                }
                try await stack.register(Array(others.prefix(30)), tags: ["fans"])

                let answer = try await api.request("POST", "/v1/apps/\(Self.app)/jobs/\(campaign)/recall")
                let recall = try #require(answer.json?.objectValue?["job"]?.stringValue)
                let done = try await eventually("the recall to finish") {
                    try await stack.report(recall)
                } until: {
                    $0.isComplete
                }
                #expect(done.targeted == fans.count && done.accepted == fans.count)
                let withdraws = Self.acceptedByType(try await stack.simulator.requestRecords())["background", default: [:]]
                #expect(fans.allSatisfy { withdraws[$0.hex] == 1 }, "every device that got it, the 20 that lost the tag too")
                #expect(others.allSatisfy { withdraws[$0.hex] == nil }, "none of the devices that gained the tag after")
            }
        }
    }

    @Test("a recalled area campaign reaches the devices that got it, also those that moved away since, not those that came")
    func areaCampaignRecallFollowsTheSentStateNotTheArea() async throws {
        let locals = (0..<100).map(PipelineStack.token)
        let visitors = (100..<150).map(PipelineStack.token)
        let paris: JSONValue = ["lat": 48.8566, "lon": 2.3522]
        let london: JSONValue = ["lat": 51.5074, "lon": -0.1278]
        try await PipelineStack.with(simulator: { $0.recordsRequests = true }) { stack in
            try await stack.register(locals + visitors)
            try await stack.withAPI { api, _ in
                func locate(_ tokens: [DeviceToken], at point: JSONValue) async throws {
                    for token in tokens {
                        let answer = try await api.request("PUT", "/v1/apps/\(Self.app)/devices/\(token.hex)/location", json: point)
                        #expect(answer.status == 200)
                    }
                }
                try await locate(locals, at: paris)
                try await locate(visitors, at: london)
                let body: JSONValue = [
                    "environment": "sandbox", "audience": ["area": ["lat": 48.8566, "lon": 2.3522, "radius-km": 20]],
                    "notification": ["aps": ["alert": "Road closed"]], "headers": ["push-type": "alert"],
                ]
                let campaign = try #require(
                    try await api.request("POST", "/v1/apps/\(Self.app)/push", json: body).json?.objectValue?["job"]?.stringValue)
                let sent = try await eventually("the campaign to finish") {
                    try await stack.report(campaign)
                } until: {
                    $0.isComplete
                }
                #expect(sent.targeted == locals.count && sent.accepted == locals.count)
                try await locate(Array(locals.prefix(20)), at: london)
                try await locate(Array(visitors.prefix(30)), at: paris)

                let answer = try await api.request("POST", "/v1/apps/\(Self.app)/jobs/\(campaign)/recall")
                let recall = try #require(answer.json?.objectValue?["job"]?.stringValue, "\(String(decoding: answer.body, as: UTF8.self))")
                let done = try await eventually("the recall to finish") {
                    try await stack.report(recall)
                } until: {
                    $0.isComplete
                }
                #expect(done.targeted == locals.count && done.accepted == locals.count)
                let withdraws = Self.acceptedByType(try await stack.simulator.requestRecords())["background", default: [:]]
                #expect(locals.allSatisfy { withdraws[$0.hex] == 1 }, "every device that got it, the 20 that moved away too")
                #expect(visitors.allSatisfy { withdraws[$0.hex] == nil }, "none of the devices that came after")
            }
        }
    }

    @Test("an overwrite replaces the campaign under its collapse id; bad content is a 400 naming the field; the window and collapse id are kept")
    func overwriteAndRefusals() async throws {
        let tokens = (0..<300).map(PipelineStack.token)
        try await PipelineStack.with(simulator: { $0.recordsRequests = true }) { stack in
            try await stack.withAPI { api, _ in
                func publish(_ extra: JSONObject = [:]) async throws -> String {
                    var body: JSONObject = [
                        "environment": "sandbox", "audience": ["tokens": .array(tokens.map { .string($0.hex) })],
                        "notification": ["aps": ["alert": "Kick-off at 8"]], "headers": ["push-type": "alert"],
                    ]
                    for (key, value) in extra { body[key] = value }
                    let answer = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: .object(body))
                    let jobID = try #require(answer.json?.objectValue?["job"]?.stringValue)
                    _ = try await eventually("job \(jobID) to finish") {
                        try await stack.report(jobID)
                    } until: {
                        $0.isComplete
                    }
                    return jobID
                }
                let campaign = try await publish()
                let path = "/v1/apps/\(Self.app)/jobs/\(campaign)/recall"

                let badKey = try await api.request("POST", path, json: ["overwrite": ["notification": ["aps": ["alert": "x"]]]])
                #expect(badKey.status == 400 && badKey.errorField == "overwrite")
                let notObject = try await api.request("POST", path, json: ["overwrite-with": "Kick-off at 9"])
                #expect(notObject.status == 400 && notObject.errorField == "overwrite-with")
                let ownCollapse = try await api.request(
                    "POST", path,
                    json: ["overwrite-with": ["notification": ["aps": ["alert": "x"]], "headers": ["push-type": "alert", "collapse-id": "mine"]]])
                #expect(ownCollapse.status == 400 && ownCollapse.errorField == "overwrite-with.headers.collapse-id")
                let background = try await api.request(
                    "POST", path,
                    json: ["overwrite-with": ["notification": ["aps": ["content-available": 1]], "headers": ["push-type": "background"]]])
                #expect(background.status == 400 && background.errorField == "overwrite-with.headers.push-type")
                let reserved = try await api.request(
                    "POST", path, json: ["overwrite-with": ["notification": ["aps": ["alert": "x"], "pushfleet": ["job": "mine"]]]])
                #expect(reserved.status == 400 && reserved.errorField == "overwrite-with.notification.pushfleet")
                #expect(try await stack.jobs.recalledBy(jobID: campaign) == nil, "a refused recall claims nothing")

                let answer = try await api.request(
                    "POST", path, json: ["overwrite-with": ["notification": ["aps": ["alert": "Kick-off moved to 9"]]]])
                #expect(answer.status == 202, "\(String(decoding: answer.body, as: UTF8.self))")
                #expect(answer.json?.objectValue?["mode"]?.stringValue == "overwrite")
                #expect(answer.json?.objectValue?["cancelled"] == .bool(false), "the campaign had finished")
                let recall = try #require(answer.json?.objectValue?["job"]?.stringValue)
                let done = try await eventually("the overwrite to finish") {
                    try await stack.report(recall)
                } until: {
                    $0.isComplete
                }
                #expect(done.accepted == tokens.count)

                let records = try await stack.simulator.requestRecords().filter { $0.status == 200 && $0.pushType == "alert" }
                let collapse = Dictionary(grouping: records, by: { $0.collapseID ?? "" }).mapValues(\.count)
                #expect(collapse[campaign] == 2 * tokens.count, "the campaign and its overwrite share the campaign's collapse id: \(collapse)")

                // A campaign without a collapse id cannot be overwritten; a withdraw still works.
                let plain = try await publish(["collapse-by-job": false])
                let noCollapse = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/jobs/\(plain)/recall", json: ["overwrite-with": ["notification": ["aps": ["alert": "x"]]]])
                #expect(noCollapse.status == 409 && noCollapse.errorCode == "no-collapse-id" && noCollapse.errorField == "job")
                #expect(try await api.request("POST", "/v1/apps/\(Self.app)/jobs/\(plain)/recall").status == 202)

                // Past the window: the campaign listed 25 hours ago.
                let old = try await publish()
                let listedAt = Int64(Date().timeIntervalSince1970 * 1000) - 25 * 3_600_000
                _ = try await stack.redis.send("ZADD", "pf:{\(Self.app)}:jobs", "XX", .integer(Int(listedAt)), .string(old))
                let late = try await api.request("POST", "/v1/apps/\(Self.app)/jobs/\(old)/recall")
                #expect(late.status == 409 && late.errorCode == "recall-window-passed", "\(String(decoding: late.body, as: UTF8.self))")

                // A recall is asked for, not published.
                let published = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push",
                    json: [
                        "environment": "sandbox", "audience": ["broadcast": true], "headers": ["push-type": "background"],
                        "notification": ["aps": ["content-available": 1], "pushfleet": ["withdraw": .string(old)]],
                        "recall": ["job": .string(old), "mode": "withdraw"],
                    ])
                #expect(published.status == 400 && published.errorField == "recall")

                let unknown = try await api.request("POST", "/v1/apps/\(Self.app)/jobs/no-such-job/recall")
                #expect(unknown.status == 404 && unknown.errorField == "job")
            }
        }
    }
}
