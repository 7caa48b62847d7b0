import APNs
import APNsCore
import APNsSimulator
import Testing

/// Certificate-based provider authentication against the simulator's CA.
@Suite("APNs certificate authentication", .serialized)
struct APNsCertificateAuthenticationTests {
    @Test(
        "the certificate's environment decides",
        arguments: [
            ("sandbox", 200, nil), ("production", 403, APNsReason.badCertificateEnvironment),
            ("staging", 403, APNsReason.badCertificate),
        ])
    func certificate(environmentName: String, status: Int, reason: APNsReason?) async throws {
        try await SimulatorHarness.with { harness in
            let issued = try harness.simulator.tlsIdentity.issueClientCertificate(
                topic: SimulatorHarness.bundleID, environmentName: environmentName)
            var request = harness.request()
            request.credential = .certificate(
                name: "\(SimulatorHarness.bundleID)-\(environmentName)", certificateChainPEM: issued.certificatePEM,
                privateKeyPEM: issued.privateKeyPEM)
            let response = try await harness.client.send(request)
            #expect(response.status == status)
            #expect(response.reason == reason)
            #expect(response.responseClass == reason.map { APNsResponseClass(status: 403, reason: $0) } ?? .success)
            // A certificate for the other environment is the same mistake for every device: the
            // job is paused. A certificate that is no good at all is the credential's problem.
            #expect(reason != .badCertificateEnvironment || response.responseClass == .misconfiguration)
            #expect(reason != .badCertificate || response.responseClass == .providerAuthentication)
        }
    }

    @Test("a certificate only pushes to its own topic")
    func otherTopic() async throws {
        try await SimulatorHarness.with(simulator: { $0.bundleIDs.insert("com.example.other") }) { harness in
            let issued = try harness.simulator.tlsIdentity.issueClientCertificate(
                topic: SimulatorHarness.bundleID, environmentName: "sandbox")
            var request = harness.request()
            request.credential = .certificate(
                name: "cert", certificateChainPEM: issued.certificatePEM, privateKeyPEM: issued.privateKeyPEM)
            request.topic = "com.example.other"
            let response = try await harness.client.send(request)
            #expect(response.reason == .topicDisallowed)
        }
    }
}
