import APNsCore
import NIOCore
import NIOHPACK

/// Validates one request the way APNs does, in Apple's order: method, path, headers,
/// authentication, topic, payload, then the device's state.
struct APNsSimulatorRequestValidator: Sendable {
    /// The parts of a valid request the simulator records.
    struct Notification: Sendable {
        var deviceToken: String
        var topic: String
        var pushType: APNsPushType
        var priority: Int?
        var expiration: Int64?
        var collapseID: String?
        var apnsID: String?
    }

    /// A refusal: the reason and, for 410, the time the token became invalid.
    struct Rejection: Error, Sendable {
        var reason: APNsReason
        var timestamp: Int64?
        /// The device token, when the path carried one.
        var deviceToken: String?

        init(_ reason: APNsReason, timestamp: Int64? = nil, deviceToken: String? = nil) {
            self.reason = reason
            self.timestamp = timestamp
            self.deviceToken = deviceToken
        }
    }

    static let devicePathPrefix = "/3/device/"
    static let maxCollapseIDBytes = 64
    static let providerTokenLifetimeSeconds: Int64 = 3600
    static let providerTokenUpdateIntervalSeconds: Int64 = 20 * 60
    private static let singleValuedHeaders = [
        "authorization", "apns-id", "apns-topic", "apns-push-type", "apns-priority",
        "apns-expiration", "apns-collapse-id",
    ]
    private static let suffixes = APNsPushType.allCases.compactMap(\.topicSuffix)

    let environment: APNsEnvironment
    let verifier: APNsSimulatorProviderTokenVerifier
    let bundleIDs: Set<String>
    let forbiddenTopics: Set<String>
    let devices: APNsSimulatorDevices

    init(configuration: APNsSimulatorConfiguration) {
        self.environment = configuration.environment
        self.verifier = APNsSimulatorProviderTokenVerifier(keys: configuration.providerKeys)
        self.bundleIDs = configuration.bundleIDs
        self.forbiddenTopics = configuration.forbiddenTopics
        self.devices = configuration.devices
    }

    /// Checks a complete request; `nowMilliseconds` is the server's wall clock.
    func validate(
        headers: HPACKHeaders, body: ByteBuffer, authentication: inout APNsSimulatorConnectionAuthentication,
        nowMilliseconds: Int64
    ) -> Result<Notification, Rejection> {
        authentication.lastRequestAuthenticated = false
        guard headers.first(name: ":method") == "POST" else { return .failure(Rejection(.methodNotAllowed)) }
        guard let path = headers.first(name: ":path"), path.hasPrefix(Self.devicePathPrefix) else {
            return .failure(Rejection(.badPath))
        }
        let deviceToken = String(path.utf8.dropFirst(Self.devicePathPrefix.utf8.count))!
        guard !deviceToken.isEmpty else { return .failure(Rejection(.missingDeviceToken)) }
        func reject(_ reason: APNsReason, timestamp: Int64? = nil) -> Result<Notification, Rejection> {
            .failure(Rejection(reason, timestamp: timestamp, deviceToken: deviceToken))
        }
        for name in Self.singleValuedHeaders where headers[name].count > 1 {
            return reject(.duplicateHeaders)
        }
        let certificateTopic: String?
        switch authenticate(headers: headers, authentication: &authentication, nowSeconds: nowMilliseconds / 1000) {
        case .failure(let rejection): return reject(rejection.reason)
        case .success(let topic): certificateTopic = topic
        }
        authentication.lastRequestAuthenticated = true
        guard Self.isWellFormed(deviceToken: deviceToken) else { return reject(.badDeviceToken) }

        var pushType = APNsPushType.alert
        if let raw = headers.first(name: "apns-push-type") {
            guard let parsed = APNsPushType(rawValue: raw) else { return reject(.invalidPushType) }
            pushType = parsed
        }
        guard let topic = headers.first(name: "apns-topic") ?? certificateTopic.map(pushType.topic(forBundleID:)) else {
            return reject(.missingTopic)
        }
        if let reason = check(topic: topic, pushType: pushType, certificateTopic: certificateTopic) {
            return reject(reason)
        }
        var priority: Int?
        if let raw = headers.first(name: "apns-priority") {
            guard let value = Int(raw), let known = APNsPriority(rawValue: value),
                !(pushType.forbidsImmediatePriority && known == .immediately)
            else { return reject(.badPriority) }
            priority = value
        }
        var expiration: Int64?
        if let raw = headers.first(name: "apns-expiration") {
            guard let value = Int64(raw), value >= 0 else { return reject(.badExpirationDate) }
            expiration = value
        }
        let apnsID = headers.first(name: "apns-id")
        if let apnsID, APNsID(apnsID) == nil { return reject(.badMessageID) }
        let collapseID = headers.first(name: "apns-collapse-id")
        if let collapseID, collapseID.utf8.count > Self.maxCollapseIDBytes { return reject(.badCollapseID) }

        if let reason = Self.payloadProblem(body, pushType: pushType) { return reject(reason) }

        if devices.bad.contains(deviceToken) { return reject(.badDeviceToken) }
        if let since = devices.unregistered[deviceToken] { return reject(.unregistered, timestamp: since) }
        if devices.expired.contains(deviceToken) { return reject(.expiredToken, timestamp: nowMilliseconds) }
        if let owner = devices.topics[deviceToken], bundleID(of: topic) != owner {
            return reject(.deviceTokenNotForTopic)
        }
        return .success(
            Notification(
                deviceToken: deviceToken, topic: topic, pushType: pushType, priority: priority,
                expiration: expiration, collapseID: collapseID, apnsID: apnsID))
    }

    /// Token or certificate authentication; returns the certificate's topic when a certificate
    /// authenticated the request.
    func authenticate(
        headers: HPACKHeaders, authentication: inout APNsSimulatorConnectionAuthentication, nowSeconds: Int64
    ) -> Result<String?, Rejection> {
        guard let authorization = headers.first(name: "authorization") else {
            guard let certificate = authentication.clientCertificate else { return .failure(Rejection(.missingProviderToken)) }
            guard let environmentName = certificate.environmentName,
                let certificateEnvironment = APNsEnvironment(rawValue: environmentName),
                let topic = certificate.topic
            else { return .failure(Rejection(.badCertificate)) }
            guard certificateEnvironment == environment else { return .failure(Rejection(.badCertificateEnvironment)) }
            return .success(topic)
        }
        guard authorization.hasPrefix("bearer ") else { return .failure(Rejection(.invalidProviderToken)) }
        let token = authorization.dropFirst("bearer ".count)
        if let current = authentication.currentToken, current == token {
            if nowSeconds - authentication.currentTokenIssuedAt > Self.providerTokenLifetimeSeconds {
                return .failure(Rejection(.expiredProviderToken))
            }
            return .success(nil)
        }
        let verified: APNsSimulatorProviderTokenVerifier.VerifiedToken
        do {
            verified = try verifier.verify(token)
        } catch {
            return .failure(Rejection(.invalidProviderToken))
        }
        if let keyEnvironment = verified.key.environment, keyEnvironment != environment {
            return .failure(Rejection(.badEnvironmentKeyIDInToken))
        }
        if let keyID = authentication.keyID, keyID != verified.key.keyID {
            return .failure(Rejection(.unrelatedKeyIDInToken))
        }
        if nowSeconds - verified.issuedAt > Self.providerTokenLifetimeSeconds {
            return .failure(Rejection(.expiredProviderToken))
        }
        if authentication.currentToken != nil,
            nowSeconds - authentication.currentTokenAcceptedAt < Self.providerTokenUpdateIntervalSeconds
        {
            return .failure(Rejection(.tooManyProviderTokenUpdates))
        }
        authentication.keyID = verified.key.keyID
        authentication.currentToken = String(token)
        authentication.currentTokenIssuedAt = verified.issuedAt
        authentication.currentTokenAcceptedAt = nowSeconds
        return .success(nil)
    }

    private func check(topic: String, pushType: APNsPushType, certificateTopic: String?) -> APNsReason? {
        guard let bundleID = bundleID(of: topic), pushType.topic(forBundleID: bundleID) == topic else {
            return .badTopic
        }
        guard allows(bundleID: bundleID, certificateTopic: certificateTopic) else { return .topicDisallowed }
        if forbiddenTopics.contains(topic) { return .forbidden }
        return nil
    }

    /// Whether the provider may push to `bundleID`: the certificate's own topic, or, with a
    /// provider token, one of the simulator's bundle ids.
    func allows(bundleID: String, certificateTopic: String?) -> Bool {
        if let certificateTopic { return certificateTopic == bundleID }
        return bundleIDs.contains(bundleID)
    }

    /// What APNs refuses in a payload for `pushType`: none, too large, or no `aps` dictionary.
    static func payloadProblem(_ body: ByteBuffer, pushType: APNsPushType) -> APNsReason? {
        guard body.readableBytes > 0 else { return .payloadEmpty }
        guard body.readableBytes <= pushType.maxPayloadBytes else { return .payloadTooLarge }
        guard isAPSPayload(body) else { return .payloadEmpty }
        return nil
    }

    /// The bundle id of a topic: the topic without a push type's suffix; `nil` when empty or
    /// containing characters no bundle id has.
    private func bundleID(of topic: String) -> String? {
        var base = Substring(topic)
        if let suffix = Self.suffixes.first(where: { topic.hasSuffix($0) }) {
            base = base.dropLast(suffix.count)
        }
        guard !base.isEmpty,
            base.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0.isAlphanumericASCII })
        else { return nil }
        return String(base)
    }

    /// Even-length lowercase or uppercase hex of 32 to 100 bytes.
    static func isWellFormed(deviceToken: String) -> Bool {
        let utf8 = deviceToken.utf8
        return (64...200).contains(utf8.count) && utf8.count.isMultiple(of: 2)
            && utf8.allSatisfy { $0.isHexDigitASCII }
    }

    /// A JSON object with an `aps` dictionary.
    static func isAPSPayload(_ body: ByteBuffer) -> Bool {
        APNsSimulatorPayloadChecker.isAPSPayload(Array(body.readableBytesView))
    }
}

extension UInt8 {
    fileprivate var isAlphanumericASCII: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }

    fileprivate var isHexDigitASCII: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
