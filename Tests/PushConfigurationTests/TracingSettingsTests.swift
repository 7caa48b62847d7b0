import PushConfiguration
import Testing

/// `tracing:`: off by default, an OTLP/HTTP endpoint and a head-sampling rate when on.
@Suite struct TracingSettingsTests {
    @Test func offByDefault() throws {
        let configuration = try parse(minimalYAML)
        #expect(configuration.tracing == TracingSettings(otlpEndpoint: nil, sampleRate: 1))
        #expect(!configuration.tracing.enabled)
    }

    @Test func explicitValues() throws {
        let configuration = try parse(
            "tracing: {otlp-endpoint: \"http://collector:4318/v1/traces\", sample-rate: 0.01}\n" + minimalYAML)
        #expect(configuration.tracing == TracingSettings(otlpEndpoint: "http://collector:4318/v1/traces", sampleRate: 0.01))
        #expect(configuration.tracing.enabled)
    }

    @Test func environmentOverridesTurnItOn() throws {
        let configuration = try parse(
            minimalYAML,
            environment: ["PUSHFLEET__TRACING__OTLP_ENDPOINT": "https://collector.example:4318/v1/traces", "PUSHFLEET__TRACING__SAMPLE_RATE": "0"])
        #expect(configuration.tracing == TracingSettings(otlpEndpoint: "https://collector.example:4318/v1/traces", sampleRate: 0))
    }

    @Test func errorsNameTheKey() {
        let cases: [(String, String)] = [
            ("tracing: {sample-rate: 1.5}", "tracing.sample-rate"),
            ("tracing: {sample-rate: -0.1}", "tracing.sample-rate"),
            ("tracing: {sample-rate: often}", "tracing.sample-rate"),
            ("tracing: {otlp-endpoint: \"collector:4318\"}", "tracing.otlp-endpoint"),
            ("tracing: {otlp-endpoint: \"grpc://collector:4317\"}", "tracing.otlp-endpoint"),
            ("tracing: {exporter: zipkin}", "tracing.exporter"),
        ]
        for (section, key) in cases {
            let error = parseError(section + "\n" + minimalYAML)
            #expect(error?.key == key, "\(section): \(String(describing: error))")
        }
    }
}
