import APNsCore
import Crypto
import Foundation
import NIOCore
import NIOHPACK
import Testing

@testable import APNsSimulator

/// Apple's validation rules, without a network.
@Suite("Simulator request validation")
struct APNsSimulatorRequestValidatorTests {
    static let token = String(repeating: "ab", count: 32)
    let key = P256.Signing.PrivateKey()
    let now: Int64 = 1_800_000_000_000

    func validator(_ change: (inout APNsSimulatorConfiguration) -> Void = { _ in }) -> APNsSimulatorRequestValidator {
        var configuration = APNsSimulatorConfiguration(
            providerKeys: [APNsSimulatorProviderKey(keyID: "KEY1", teamID: "TEAM1", publicKey: key.publicKey)],
            bundleIDs: ["com.example.app"])
        change(&configuration)
        return APNsSimulatorRequestValidator(configuration: configuration)
    }

    func jwt(keyID: String = "KEY1", teamID: String = "TEAM1", issuedAt: Int64? = nil, signer: P256.Signing.PrivateKey? = nil) throws -> String {
        func encode(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let input =
            encode(#"{"alg":"ES256","kid":"\#(keyID)"}"#) + "."
            + encode(#"{"iss":"\#(teamID)","iat":\#(issuedAt ?? now / 1000)}"#)
        let signature = try (signer ?? key).signature(for: Data(input.utf8)).rawRepresentation
        return input + "."
            + signature.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    func headers(_ changes: [(String, String?)] = [], authorization: String? = nil) throws -> HPACKHeaders {
        var pairs: [(String, String)] = [
            (":method", "POST"), (":scheme", "https"), (":path", "/3/device/\(Self.token)"),
            ("authorization", "bearer \(try authorization ?? jwt())"), ("apns-topic", "com.example.app"),
        ]
        for (name, value) in changes {
            if let value {
                if let index = pairs.firstIndex(where: { $0.0 == name }) { pairs[index].1 = value } else { pairs.append((name, value)) }
            } else {
                pairs.removeAll { $0.0 == name }
            }
        }
        return HPACKHeaders(pairs)
    }

    func reason(
        _ validator: APNsSimulatorRequestValidator, _ headers: HPACKHeaders,
        body: ByteBuffer = ByteBuffer(string: #"{"aps":{}}"#),
        authentication: inout APNsSimulatorConnectionAuthentication
    ) -> APNsReason? {
        switch validator.validate(headers: headers, body: body, authentication: &authentication, nowMilliseconds: now) {
        case .success: nil
        case .failure(let rejection): rejection.reason
        }
    }

    func reason(_ headers: HPACKHeaders, body: ByteBuffer = ByteBuffer(string: #"{"aps":{}}"#)) -> APNsReason? {
        var authentication = APNsSimulatorConnectionAuthentication()
        return reason(validator(), headers, body: body, authentication: &authentication)
    }

    @Test("a valid request passes")
    func valid() throws {
        #expect(reason(try headers()) == nil)
    }

    @Test("header rules")
    func headerRules() throws {
        #expect(reason(try headers([("apns-priority", "10")])) == nil)
        #expect(reason(try headers([("apns-priority", "11")])) == .badPriority)
        #expect(reason(try headers([("apns-push-type", "background"), ("apns-priority", "10")])) == .badPriority)
        #expect(reason(try headers([("apns-expiration", "-1")])) == .badExpirationDate)
        #expect(reason(try headers([("apns-id", "123e4567-e89b-12d3-a456-426614174000")])) == nil)
        #expect(reason(try headers([("apns-id", "123e4567")])) == .badMessageID)
        #expect(reason(try headers([("apns-collapse-id", String(repeating: "x", count: 64))])) == nil)
        #expect(reason(try headers([("apns-push-type", "voip")])) == .badTopic)
        #expect(reason(try headers([("apns-push-type", "voip"), ("apns-topic", "com.example.app.voip")])) == nil)
        #expect(reason(try headers([("apns-topic", "com.example.app.complication")])) == .badTopic)
        #expect(reason(try headers([("apns-topic", "")])) == .badTopic)
        #expect(reason(try headers([("apns-topic", nil)])) == .missingTopic)
        #expect(reason(try headers([(":path", "/3/device/abc")])) == .badDeviceToken)
        #expect(reason(try headers([(":path", "/3/device/" + String(repeating: "zz", count: 32))])) == .badDeviceToken)
    }

    @Test("payload rules")
    func payloadRules() throws {
        #expect(reason(try headers(), body: ByteBuffer(string: "[1]")) == .payloadEmpty)
        #expect(reason(try headers(), body: ByteBuffer(string: #"{"aps":1}"#)) == .payloadEmpty)
        #expect(reason(try headers(), body: ByteBuffer(string: "{")) == .payloadEmpty)
        let exactly4096 = #"{"aps":{},"x":""# + String(repeating: "y", count: 4096 - 17) + #""}"#
        #expect(exactly4096.utf8.count == 4096)
        #expect(reason(try headers(), body: ByteBuffer(string: exactly4096)) == nil)
    }

    @Test("provider token rules")
    func providerTokens() throws {
        let stranger = P256.Signing.PrivateKey()
        #expect(reason(try headers(authorization: jwt(signer: stranger))) == .invalidProviderToken)
        #expect(reason(try headers(authorization: jwt(teamID: "OTHER"))) == .invalidProviderToken)
        #expect(reason(try headers(authorization: jwt(keyID: "NOPE"))) == .invalidProviderToken)
        #expect(reason(try headers(authorization: jwt(issuedAt: now / 1000 - 3601))) == .expiredProviderToken)
        #expect(reason(try headers(authorization: jwt(issuedAt: now / 1000 - 3599))) == nil)
        #expect(reason(try headers([("authorization", "Basic abc")])) == .invalidProviderToken)
    }

    @Test("a token accepted on a connection expires there after an hour")
    func cachedTokenExpires() throws {
        let validator = validator()
        var authentication = APNsSimulatorConnectionAuthentication()
        let token = try jwt(issuedAt: now / 1000 - 3000)
        #expect(reason(validator, try headers(authorization: token), authentication: &authentication) == nil)
        var later = authentication
        later.currentTokenIssuedAt = now / 1000 - 3601
        #expect(reason(validator, try headers(authorization: token), authentication: &later) == .expiredProviderToken)
    }

    @Test("a new token is allowed on a connection after 20 minutes")
    func tokenUpdateInterval() throws {
        let validator = validator()
        var authentication = APNsSimulatorConnectionAuthentication()
        #expect(reason(validator, try headers(authorization: jwt(issuedAt: now / 1000 - 10)), authentication: &authentication) == nil)
        #expect(reason(validator, try headers(authorization: jwt()), authentication: &authentication) == .tooManyProviderTokenUpdates)
        authentication.currentTokenAcceptedAt -= 20 * 60
        #expect(reason(validator, try headers(authorization: jwt()), authentication: &authentication) == nil)
    }
}
