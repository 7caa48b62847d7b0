import Foundation
import PushCore
import Testing

/// A job's `delivery`: how its notifications reach the devices.
struct DeliveryRouteTests {
    @Test func apnsIsTheDefaultAndIsNotWritten() throws {
        let job = try Fixtures.decode(Fixtures.job)
        #expect(job.delivery == .apns)
        #expect(job.jsonValue.objectValue?["delivery"] == nil)
        let explicit = try Fixtures.decode(Fixtures.job.setting("apns", at: ["delivery"]))
        #expect(explicit.delivery == .apns)
    }

    @Test func onlineFirstRoundTripsThroughJobsAndChunks() throws {
        let job = try Fixtures.decode(Fixtures.job.setting("online-first", at: ["delivery"]).setting("j1", at: ["id"]))
        #expect(job.delivery == .onlineFirst)
        #expect(job.jsonValue.objectValue?["delivery"] == "online-first")
        #expect(try PushJob.decodeAndValidate(from: job.jsonData()) == job)
        guard case .tokens(let tokens) = job.audience else {
            Issue.record("a token audience")
            return
        }
        let chunk = DeliveryChunk(job: job, chunkID: "t0", tokens: tokens, positions: [0])
        #expect(try DeliveryChunk.decodeAndValidate(from: chunk.jsonData()).job.delivery == .onlineFirst)
    }

    @Test func onlineOnlyRoundTripsAndKeepsTheOnlineChannelsRules() throws {
        let job = try Fixtures.decode(Fixtures.job.setting("online-only", at: ["delivery"]))
        #expect(job.delivery == .onlineOnly)
        #expect(job.delivery.usesOnlineChannel && !DeliveryRoute.apns.usesOnlineChannel)
        #expect(try PushJob.decodeAndValidate(from: job.jsonData()) == job)
        let voip = Fixtures.rejection(Fixtures.job.setting("online-only", at: ["delivery"]).setting(["push-type": "voip"], at: ["headers"]))
        #expect(voip?.field == "delivery")
        #expect(voip?.message == "online-only takes alert and background pushes, not voip; use apns")
    }

    @Test func anUnknownRouteNamesTheField() {
        for value: JSONValue in ["online-later", "APNS", 1, .null] {
            let error = Fixtures.rejection(Fixtures.job.setting(value, at: ["delivery"]))
            #expect(error?.field == "delivery", "\(value)")
        }
        let error = Fixtures.rejection(Fixtures.job.setting("online-later", at: ["delivery"]))
        #expect(error?.message == "'online-later' is not apns or online-first or online-only")
    }

    static let refused: [(change: @Sendable (JSONValue) -> JSONValue, message: String)] = [
        ({ $0.setting(["push-type": "voip"], at: ["headers"]) }, "online-first takes alert and background pushes, not voip; use apns"),
        (
            { $0.setting(["push-type": "location"], at: ["headers"]) },
            "online-first takes alert and background pushes, not location; use apns"
        ),
        (
            { $0.setting(["broadcast": true], at: ["audience"]).setting(["aps": ["alert": "Hi", "badge": ["increment": 1]]], at: ["notification"]) },
            "a badge kept by the server counts APNs sends: give a number with online-first, or use apns"
        ),
    ]

    @Test(arguments: 0..<refused.count)
    func whatTheOnlineChannelDoesNotCarry(index: Int) {
        let (change, message) = Self.refused[index]
        let error = Fixtures.rejection(change(Fixtures.job.setting("online-first", at: ["delivery"])))
        #expect(error?.field == "delivery")
        #expect(error?.message == message)
    }

    @Test func backgroundPushesAndRegistryAudiencesGoOnline() throws {
        let background = Fixtures.job.setting("online-first", at: ["delivery"])
            .setting(["push-type": "background", "priority": 5], at: ["headers"])
            .setting(["aps": ["content-available": 1]], at: ["notification"])
        #expect(try Fixtures.decode(background).delivery == .onlineFirst)
        let broadcast = Fixtures.job.setting("online-first", at: ["delivery"]).setting(["broadcast": true], at: ["audience"])
        #expect(try Fixtures.decode(broadcast).delivery == .onlineFirst)
    }
}
