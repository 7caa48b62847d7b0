import APNs
import APNsCore
import APNsSimulator
import Foundation
import NIOCore
import Testing

@Suite("Broadcast channel ids and policies")
struct APNsChannelIDTests {
    @Test("a channel id is base64 text of 1 to 128 characters")
    func channelIDs() {
        #expect(APNsChannelID("dHN0LXNyY2gtY2hubA==")?.rawValue == "dHN0LXNyY2gtY2hubA==")
        #expect(APNsChannelID("abc+/09") != nil)
        for bad in ["", "===", "a===", "has space", "dHN0\n", "ab=c", String(repeating: "a", count: 129)] {
            #expect(APNsChannelID(bad) == nil, "\(bad)")
        }
    }

    @Test("storage policies by name and by Apple's number")
    func policies() {
        #expect(APNsMessageStoragePolicy(name: "none") == .noMessageStored)
        #expect(APNsMessageStoragePolicy(name: "1") == .mostRecentMessageStored)
        #expect(APNsMessageStoragePolicy(name: "most-recent")?.rawValue == 1)
        #expect(APNsMessageStoragePolicy(name: "2") == nil)
    }

    @Test("management goes to Apple's management hosts, or where an overridden environment's notifications go")
    func managementEndpoint() {
        let apple = APNsClientConfiguration()
        #expect(apple.endpoint(for: .sandbox, service: .channelManagement) == .init(host: "api-manage-broadcast.sandbox.push.apple.com", port: 2195))
        #expect(apple.endpoint(for: .production, service: .channelManagement) == .init(host: "api-manage-broadcast.push.apple.com", port: 2196))
        #expect(apple.endpoint(for: .production, service: .push) == .init(host: "api.push.apple.com", port: 443))
        var relay = APNsClientConfiguration(endpointOverride: .init(host: "relay.internal", port: 8443))
        #expect(relay.endpoint(for: .sandbox, service: .channelManagement) == .init(host: "relay.internal", port: 8443))
        relay.channelManagementEndpoints[.sandbox] = .init(host: "manage.internal", port: 9443)
        #expect(relay.endpoint(for: .sandbox, service: .channelManagement) == .init(host: "manage.internal", port: 9443))
    }

    @Test("a successful management answer without what it should carry is not taken as success")
    func malformedAnswers() {
        let created = APNsResponse(status: 201, apnsID: nil, reason: nil, timestamp: nil, attempts: 1)
        let answer = APNsClient.channelAnswer(to: .create(.noMessageStored), response: created)
        #expect(!answer.isSuccess && answer.response.reason == .unknown("MalformedAnswer"))
        var withID = created
        withID.channelID = "dHN0LXNyY2gtY2hubA=="
        #expect(APNsClient.channelAnswer(to: .create(.noMessageStored), response: withID).channel?.id.rawValue == "dHN0LXNyY2gtY2hubA==")
        let deleted = APNsResponse(status: 204, apnsID: nil, reason: nil, timestamp: nil, attempts: 1)
        #expect(APNsClient.channelAnswer(to: .delete(APNsChannelID("YQ==")!), response: deleted).isSuccess)
    }
}

@Suite("Broadcast channels against the simulator")
struct APNsChannelSimulatorTests {
    static let liveActivity = ByteBuffer(string: #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"2-1"}}}"#)

    @Test("create, read, list, broadcast and delete over the management API and /4/broadcasts")
    func lifecycle() async throws {
        try await SimulatorHarness.with { harness in
            let client = harness.client
            let bundle = SimulatorHarness.bundleID
            func manage(_ operation: APNsChannelOperation) async throws -> APNsChannelAnswer {
                try await client.manageChannels(operation, bundleID: bundle, credential: harness.credential, environment: .sandbox)
            }
            let requestID = APNsID.random()
            let created = try await client.manageChannels(
                .create(.noMessageStored), bundleID: bundle, credential: harness.credential, environment: .sandbox, requestID: requestID)
            #expect(created.response.status == 201)
            #expect(created.response.requestID == requestID.uuidString)
            let channel = try #require(created.channel)
            #expect(channel.messageStoragePolicy == .noMessageStored)
            let stored = try #require(try await manage(.create(.mostRecentMessageStored)).channel)

            let read = try await manage(.read(stored.id))
            #expect(read.response.status == 200 && read.channel == stored)
            let listed = try await manage(.list)
            #expect(Set(listed.channelIDs) == [channel.id, stored.id])

            func broadcast(_ id: APNsChannelID, expiration: Int64?) async throws -> APNsResponse {
                try await client.broadcast(
                    APNsBroadcastRequest(
                        credential: harness.credential, environment: .sandbox, bundleID: bundle, channelID: id,
                        priority: .immediately, expiration: expiration, payload: Self.liveActivity))
            }
            let sent = try await broadcast(channel.id, expiration: 0)
            #expect(sent.status == 200 && sent.isSuccess && sent.requestID != nil)
            // A channel that stores nothing takes only expiration 0.
            let refused = try await broadcast(channel.id, expiration: Int64(Date().timeIntervalSince1970) + 3600)
            #expect(refused.status == 400 && refused.reason == .badExpirationDate && refused.responseClass == .misconfiguration)
            #expect(try await broadcast(stored.id, expiration: Int64(Date().timeIntervalSince1970) + 3600).isSuccess)

            let deleted = try await manage(.delete(channel.id))
            #expect(deleted.response.status == 204)
            let gone = try await broadcast(channel.id, expiration: 0)
            #expect(gone.reason == .channelNotRegistered)
            #expect(try await manage(.read(channel.id)).response.reason == .channelNotRegistered)
            #expect(try await manage(.list).channelIDs == [stored.id])

            let counters = try await harness.simulator.counters()
            #expect(counters.broadcasts == [channel.id.rawValue: 1, stored.id.rawValue: 1])
            #expect(counters.channels == 1)
            #expect(counters.rejections == ["BadExpirationDate": 1, "ChannelNotRegistered": 2])
        }
    }

    @Test("Apple's refusals: the channel limit, an unknown bundle, a bundle without the capability, a bad channel id")
    func refusals() async throws {
        try await SimulatorHarness.with(simulator: {
            $0.maxChannelsPerApp = 2
            $0.bundleIDs.insert("com.example.nobroadcast")
            $0.broadcastDisabledBundleIDs = ["com.example.nobroadcast"]
        }) { harness in
            let client = harness.client
            func create(_ bundle: String) async throws -> APNsChannelAnswer {
                try await client.manageChannels(
                    .create(.mostRecentMessageStored), bundleID: bundle, credential: harness.credential, environment: .sandbox)
            }
            #expect(try await create(SimulatorHarness.bundleID).isSuccess)
            #expect(try await create(SimulatorHarness.bundleID).isSuccess)
            let third = try await create(SimulatorHarness.bundleID)
            #expect(third.response.reason == .cannotCreateChannelConfig && third.channel == nil)
            #expect(try await create("com.example.other").response.reason == .topicDisallowed)
            #expect(try await create("com.example.nobroadcast").response.reason == .featureNotEnabled)
            let unknown = try await client.broadcast(
                APNsBroadcastRequest(
                    credential: harness.credential, environment: .sandbox, bundleID: SimulatorHarness.bundleID,
                    channelID: APNsChannelID("bm90LWEtY2hhbm5lbA==")!, payload: APNsChannelSimulatorTests.liveActivity))
            #expect(unknown.reason == .channelNotRegistered && unknown.responseClass == .misconfiguration)
        }
    }
}
