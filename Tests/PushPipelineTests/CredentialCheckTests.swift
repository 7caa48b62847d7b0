import APNs
import APNsCore
import NIOCore
import PushConfiguration
import PushPipeline
import Testing

@Suite("What a probe says of a credential (CredentialCheck)")
struct CredentialCheckTests {
    static func answer(_ status: Int, _ reason: APNsReason? = nil) -> Result<APNsResponse, APNsError> {
        .success(APNsResponse(status: status, apnsID: nil, reason: reason, timestamp: nil, attempts: 1))
    }

    @Test("APNs got past the credential, topic and environment: accepted, whatever it thought of the token")
    func accepted() {
        #expect(CredentialCheck.verdict(Self.answer(400, .badDeviceToken)) == .accepted(answer: "400 BadDeviceToken"))
        #expect(CredentialCheck.verdict(Self.answer(200)) == .accepted(answer: "200 accepted"))
        #expect(CredentialCheck.verdict(Self.answer(410, .unregistered)).passed)
    }

    @Test("a refused credential, a refused topic or environment, a busy APNs and no answer each fail the check")
    func refused() {
        #expect(CredentialCheck.verdict(Self.answer(403, .invalidProviderToken)) == .credentialRefused(reason: "403 InvalidProviderToken"))
        #expect(CredentialCheck.verdict(Self.answer(403, .badCertificate)) == .credentialRefused(reason: "403 BadCertificate"))
        #expect(
            CredentialCheck.verdict(Self.answer(400, .badCertificateEnvironment)) == .configurationRefused(reason: "400 BadCertificateEnvironment"))
        #expect(CredentialCheck.verdict(Self.answer(400, .topicDisallowed)) == .configurationRefused(reason: "400 TopicDisallowed"))
        #expect(CredentialCheck.verdict(Self.answer(503, .serviceUnavailable)) == .inconclusive(reason: "503 ServiceUnavailable"))
        #expect(CredentialCheck.verdict(.failure(APNsError(.connectFailed))) == .unreachable(reason: "connectFailed"))
        for outcome in [Self.answer(403, .expiredProviderToken), Self.answer(429, .tooManyRequests), .failure(APNsError(.timeout))] {
            #expect(!CredentialCheck.verdict(outcome).passed)
        }
    }

    @Test("the probe is a background notification to a token of zeros, for the app's bundle id, with the environment's credential")
    func probe() throws {
        let sandbox = APNsCredential.certificate(name: "news/sandbox", certificateChainPEM: "", privateKeyPEM: "")
        let production = APNsCredential.certificate(name: "news/production", certificateChainPEM: "", privateKeyPEM: "")
        let app = PushApp(
            settings: AppSettings(id: "news", bundleID: "com.example.news", auth: .certificate(certificateFile: "/c", keyFile: "/k")),
            credentials: [.sandbox: sandbox, .production: production])
        let probe = CredentialCheck.probe(for: app, environment: .production)
        #expect(probe.credential.id == "certificate/news/production")
        #expect(probe.environment == .production)
        #expect(probe.deviceToken.hex == String(repeating: "0", count: 64))
        #expect(probe.topic == "com.example.news")
        #expect(probe.pushType == .background && probe.priority == .considerDevicePower)
        #expect(String(buffer: probe.payload) == #"{"aps":{"content-available":1}}"#)
    }
}
