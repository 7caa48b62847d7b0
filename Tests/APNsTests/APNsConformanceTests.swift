@_spi(Testing) import APNs
import APNsCore
import APNsSimulator
import Crypto
import Foundation
import NIOCore
import Testing

/// Every reason the simulator produces, reached through the real client and classified.
@Suite("APNs conformance against the simulator", .serialized)
struct APNsConformanceTests {
    static let badToken = SimulatorHarness.token(900)
    static let unregisteredToken = SimulatorHarness.token(901)
    static let expiredToken = SimulatorHarness.token(902)
    static let otherAppToken = SimulatorHarness.token(903)
    static let unregisteredSince: Int64 = 1_700_000_000_123

    /// One request variation and the answer Apple gives to it.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var status: Int
        var reason: APNsReason?
        var responseClass: APNsResponseClass
        var change: @Sendable (inout APNsRequest) -> Void

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "accepted", status: 200, reason: nil, responseClass: .success) { _ in },
        Case(name: "voip payload above 4096 fits 5120", status: 200, reason: nil, responseClass: .success) {
            $0.pushType = .voip
            $0.topic = APNsPushType.voip.topic(forBundleID: SimulatorHarness.bundleID)
            $0.payload = SimulatorHarness.payload(size: 5000)
        },
        Case(name: "bad device token", status: 400, reason: .badDeviceToken, responseClass: .tokenRejected) {
            $0.deviceToken = badToken
        },
        Case(name: "malformed device token", status: 400, reason: .badDeviceToken, responseClass: .tokenRejected) {
            $0.deviceToken = try! DeviceToken(hex: "abcd")
        },
        Case(name: "unregistered", status: 410, reason: .unregistered, responseClass: .unregistered) {
            $0.deviceToken = unregisteredToken
        },
        Case(name: "expired token", status: 410, reason: .expiredToken, responseClass: .unregistered) {
            $0.deviceToken = expiredToken
        },
        Case(name: "token of another app", status: 400, reason: .deviceTokenNotForTopic, responseClass: .tokenRejected) {
            $0.deviceToken = otherAppToken
        },
        Case(name: "topic suffix of another push type", status: 400, reason: .badTopic, responseClass: .misconfiguration) {
            $0.topic = SimulatorHarness.bundleID + ".voip"
        },
        Case(name: "topic of another team", status: 400, reason: .topicDisallowed, responseClass: .misconfiguration) {
            $0.topic = "com.unknown.app"
        },
        Case(name: "forbidden topic", status: 403, reason: .forbidden, responseClass: .misconfiguration) {
            $0.topic = "com.example.forbidden"
        },
        Case(name: "missing topic", status: 400, reason: .missingTopic, responseClass: .misconfiguration) {
            $0.headerOverrides = [("apns-topic", nil)]
        },
        Case(name: "unknown push type", status: 400, reason: .invalidPushType, responseClass: .misconfiguration) {
            $0.headerOverrides = [("apns-push-type", nil), ("apns-push-type", "bogus")]
        },
        Case(name: "priority 7", status: 400, reason: .badPriority, responseClass: .misconfiguration) {
            $0.headerOverrides = [("apns-priority", "7")]
        },
        Case(name: "background with priority 10", status: 400, reason: .badPriority, responseClass: .misconfiguration) {
            $0.pushType = .background
            $0.priority = .immediately
        },
        Case(name: "expiration not a number", status: 400, reason: .badExpirationDate, responseClass: .misconfiguration) {
            $0.headerOverrides = [("apns-expiration", "soon")]
        },
        Case(name: "apns-id not a UUID", status: 400, reason: .badMessageID, responseClass: .misconfiguration) {
            $0.headerOverrides = [("apns-id", nil), ("apns-id", "not-a-uuid")]
        },
        Case(name: "collapse id of 65 bytes", status: 400, reason: .badCollapseID, responseClass: .misconfiguration) {
            $0.collapseID = String(repeating: "c", count: 65)
        },
        Case(name: "topic header twice", status: 400, reason: .duplicateHeaders, responseClass: .misconfiguration) {
            $0.headerOverrides = [("apns-topic", SimulatorHarness.bundleID)]
        },
        Case(name: "empty payload", status: 400, reason: .payloadEmpty, responseClass: .misconfiguration) {
            $0.payload = ByteBuffer()
        },
        Case(name: "payload above 4096", status: 413, reason: .payloadTooLarge, responseClass: .misconfiguration) {
            $0.payload = SimulatorHarness.payload(size: 4097)
        },
        Case(name: "no device in path", status: 400, reason: .missingDeviceToken, responseClass: .misconfiguration) {
            $0.headerOverrides = [(":path", "/3/device/")]
        },
        Case(name: "wrong path", status: 404, reason: .badPath, responseClass: .misconfiguration) {
            $0.headerOverrides = [(":path", "/2/device/abcd")]
        },
        Case(name: "GET", status: 405, reason: .methodNotAllowed, responseClass: .misconfiguration) {
            $0.headerOverrides = [(":method", "GET")]
        },
        Case(name: "no authorization", status: 403, reason: .missingProviderToken, responseClass: .providerAuthentication) {
            $0.headerOverrides = [("authorization", nil)]
        },
        Case(name: "garbage authorization", status: 403, reason: .invalidProviderToken, responseClass: .providerAuthentication) {
            $0.headerOverrides = [("authorization", nil), ("authorization", "bearer not.a.jwt")]
        },
    ]

    @Test("answer and classification", arguments: cases)
    func conformance(_ testCase: Case) async throws {
        try await SimulatorHarness.with(simulator: Self.configureDevices) { harness in
            var request = harness.request()
            testCase.change(&request)
            let response = try await harness.client.send(request)
            #expect(response.status == testCase.status)
            #expect(response.reason == testCase.reason)
            #expect(response.responseClass == testCase.responseClass)
            if testCase.status == 410 {
                #expect(response.timestamp != nil)
            }
            let counters = try await harness.simulator.counters()
            if let reason = testCase.reason {
                #expect(counters.rejections[reason.rawValue] == 1)
                #expect(counters.accepted == 0)
            } else {
                #expect(counters.accepted == 1)
            }
        }
    }

    static func configureDevices(_ configuration: inout APNsSimulatorConfiguration) {
        configuration.bundleIDs.insert("com.example.forbidden")
        configuration.forbiddenTopics = ["com.example.forbidden"]
        configuration.devices = APNsSimulatorDevices(
            unregistered: [unregisteredToken.hex: unregisteredSince],
            expired: [expiredToken.hex],
            bad: [badToken.hex],
            topics: [otherAppToken.hex: "com.example.other"])
    }

    @Test("410 carries the time the token became invalid")
    func unregisteredTimestamp() async throws {
        try await SimulatorHarness.with(simulator: Self.configureDevices) { harness in
            let response = try await harness.client.send(harness.request(token: Self.unregisteredToken))
            #expect(response.timestamp == Self.unregisteredSince)
        }
    }

    @Test("every header reaches APNs as sent, and the apns-id comes back")
    func headers() async throws {
        try await SimulatorHarness.with(simulator: { $0.recordsRequests = true }) { harness in
            let apnsID = APNsID.random()
            var request = harness.request(pushType: .liveactivity)
            request.priority = .considerDevicePower
            request.expiration = 1_900_000_000
            request.collapseID = "score"
            request.apnsID = apnsID
            let response = try await harness.client.send(request)
            #expect(response.status == 200)
            #expect(response.apnsID == apnsID.uuidString)
            let records = try await harness.simulator.requestRecords()
            let record = try #require(records.first)
            #expect(record.topic == "com.example.app.push-type.liveactivity")
            #expect(record.pushType == "liveactivity")
            #expect(record.priority == 5)
            #expect(record.expiration == 1_900_000_000)
            #expect(record.collapseID == "score")
            #expect(record.requestAPNsID == apnsID.uuidString)
        }
    }

    @Test("without apns-id the client generates one and returns APNs's")
    func generatedAPNsID() async throws {
        try await SimulatorHarness.with { harness in
            let response = try await harness.client.send(harness.request())
            let apnsID = try #require(response.apnsID)
            #expect(APNsID(apnsID) != nil)
        }
    }

    @Test("a key of another team's key id is an invalid provider token")
    func unknownKey() async throws {
        try await SimulatorHarness.with { harness in
            var request = harness.request()
            request.credential = .token(
                teamID: SimulatorHarness.teamID, keyID: "UNKNOWNKEY",
                privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation)
            let response = try await harness.client.send(request)
            #expect(response.reason == .invalidProviderToken)
            #expect(response.responseClass == .providerAuthentication)
        }
    }

    @Test("a token signed by a key registered for production is refused by sandbox")
    func keyForOtherEnvironment() async throws {
        try await SimulatorHarness.with(simulator: { $0.providerKeys[0].environment = .production }) { harness in
            let response = try await harness.client.send(harness.request())
            #expect(response.status == 403)
            #expect(response.reason == .badEnvironmentKeyIDInToken)
            #expect(response.responseClass == .providerAuthentication)
        }
    }

    @Test("a token older than an hour is expired")
    func expiredProviderToken() async throws {
        let twoHoursAgo = Date().addingTimeInterval(-7200)
        try await SimulatorHarness.with(clock: { twoHoursAgo }) { harness in
            let response = try await harness.client.send(harness.request())
            #expect(response.status == 403)
            #expect(response.reason == .expiredProviderToken)
            #expect(response.responseClass == .providerAuthentication)
        }
    }

    @Test("a second key on one connection is unrelated")
    func unrelatedKey() async throws {
        let otherKey = P256.Signing.PrivateKey()
        try await SimulatorHarness.with(simulator: {
            $0.providerKeys.append(
                APNsSimulatorProviderKey(keyID: "OTHERKEY01", teamID: SimulatorHarness.teamID, publicKey: otherKey.publicKey))
        }) { harness in
            #expect(try await harness.client.send(harness.request()).status == 200)
            let otherToken = try APNsProviderToken(
                teamID: SimulatorHarness.teamID, keyID: "OTHERKEY01", privateKey: otherKey, issuedAt: Date())
            var request = harness.request()
            request.headerOverrides = [("authorization", nil), ("authorization", "bearer \(otherToken.value)")]
            let response = try await harness.client.send(request)
            #expect(response.status == 403)
            #expect(response.reason == .unrelatedKeyIDInToken)
            #expect(response.responseClass == .providerAuthentication)
        }
    }

    @Test("a new token on the same connection within 20 minutes is too many updates")
    func tooManyProviderTokenUpdates() async throws {
        try await SimulatorHarness.with { harness in
            #expect(try await harness.client.send(harness.request()).status == 200)
            let newToken = try APNsProviderToken(
                teamID: SimulatorHarness.teamID, keyID: SimulatorHarness.keyID,
                privateKey: P256.Signing.PrivateKey(pemRepresentation: harness.privateKeyPEM), issuedAt: Date())
            var request = harness.request()
            request.headerOverrides = [("authorization", nil), ("authorization", "bearer \(newToken.value)")]
            let response = try await harness.client.send(request)
            #expect(response.status == 429)
            #expect(response.reason == .tooManyProviderTokenUpdates)
            #expect(response.responseClass == .providerAuthentication)
        }
    }

    @Test("above the per-device rate APNs answers 429 TooManyRequests")
    func tooManyRequests() async throws {
        try await SimulatorHarness.with(simulator: { $0.devices.maxNotificationsPerSecondPerDevice = 1 }) { harness in
            var responses: [APNsResponse] = []
            for _ in 0..<3 {
                responses.append(try await harness.client.send(harness.request()))
            }
            let throttled = try #require(responses.first { $0.status == 429 })
            #expect(throttled.reason == .tooManyRequests)
            #expect(throttled.responseClass == .retryable)
        }
    }

    @Test(
        "server failures are retryable",
        arguments: [
            (APNsReason.internalServerError, 500), (APNsReason.serviceUnavailable, 503), (APNsReason.shutdown, 503),
        ])
    func serverFailures(reason: APNsReason, status: Int) async throws {
        try await SimulatorHarness.with(simulator: {
            switch reason {
            case .internalServerError: $0.faults.internalServerErrorRate = 1
            case .serviceUnavailable: $0.faults.serviceUnavailableRate = 1
            default: $0.faults.shutdownRate = 1
            }
        }) { harness in
            let response = try await harness.client.send(harness.request())
            #expect(response.status == status)
            #expect(response.reason == reason)
            #expect(response.responseClass == .retryable)
        }
    }

    @Test("an idle connection gets GOAWAY IdleTimeout and the client reconnects")
    func idleTimeout() async throws {
        try await SimulatorHarness.with(simulator: { $0.idleTimeout = .milliseconds(100) }) { harness in
            #expect(try await harness.client.send(harness.request()).status == 200)
            let deadline = ContinuousClock.now + .seconds(10)
            while try await harness.simulator.counters().idleTimeouts == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(try await harness.simulator.counters().idleTimeouts >= 1)
            #expect(try await harness.client.send(harness.request()).status == 200)
            // The pool replaces a closed connection at once, and a replacement left idle for
            // 100 ms on a loaded machine gets its own GOAWAY: count at least, not exactly.
            #expect(try await harness.simulator.counters().connections >= 2)
            #expect(APNsResponseClass(status: 400, reason: .idleTimeout) == .retryable)
        }
    }
}
