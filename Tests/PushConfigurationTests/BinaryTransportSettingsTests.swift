import APNsCore
import Foundation
import PushConfiguration
import Testing

/// `apps.<id>.transport` and the binary interface's `apns` settings.
@Suite struct BinaryTransportSettingsTests {
    static let certificateApp = """
        kafka: {bootstrap-servers: "broker:9092"}
        apns:
          binary-endpoints:
            sandbox: {host: gateway.local, port: 2195}
          feedback-endpoints:
            production: {host: feedback.local, port: 2196}
          binary-quiet-period-ms: 250
          feedback-interval-seconds: 60
        apps:
          news:
            bundle-id: com.example.news
            transport: binary
            auth:
              certificate: {certificate-file: news.pem, key-file: news-key.pem}

        """

    @Test func defaultsAndExplicitValues() throws {
        let plain = try parse(minimalYAML)
        #expect(plain.apps["news"]?.transport == .http2)
        #expect(plain.apns.binaryEndpoints.isEmpty && plain.apns.feedbackEndpoints.isEmpty)
        #expect(plain.apns.binaryQuietPeriod == .milliseconds(500) && plain.apns.feedbackInterval == .seconds(3600))

        let binary = try parse(Self.certificateApp)
        #expect(binary.apps["news"]?.transport == .binary)
        #expect(binary.apns.binaryEndpoints == [.sandbox: APNsEndpoint(host: "gateway.local", port: 2195)])
        #expect(binary.apns.feedbackEndpoints == [.production: APNsEndpoint(host: "feedback.local", port: 2196)])
        #expect(binary.apns.binaryQuietPeriod == .milliseconds(250) && binary.apns.feedbackInterval == .seconds(60))
    }

    @Test func errorsNameTheKey() {
        #expect(parseError(minimalYAML + "    transport: spdy\n")?.key == "apps.news.transport")
        let signingKey = parseError(minimalYAML + "    transport: binary\n")
        #expect(signingKey?.key == "apps.news.transport", "a signing key cannot authenticate on the binary interface")
        #expect(signingKey?.message.contains("certificate") == true)
        #expect(
            parseError(Self.certificateApp.replacingOccurrences(of: "binary-quiet-period-ms: 250", with: "binary-quiet-period-ms: 0"))?.key
                == "apns.binary-quiet-period-ms")
        #expect(
            parseError(Self.certificateApp.replacingOccurrences(of: "{host: gateway.local, port: 2195}", with: "{port: 2195}"))?.key
                == "apns.binary-endpoints.sandbox.host")
    }
}
