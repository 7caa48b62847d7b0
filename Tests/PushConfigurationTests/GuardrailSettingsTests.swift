import APNsCore
import PushConfiguration
import Testing

/// `breaker:`, `apps.<id>.extra-topics`, `apns.endpoints`, `registry.probe-other-environment` and
/// the registry's location settings.
@Suite struct GuardrailSettingsTests {
    @Test func defaults() throws {
        let configuration = try parse(minimalYAML)
        #expect(configuration.breaker == BreakerSettings(watchNotifications: 2_000, minNotifications: 200, maxRejectedShare: 0.1))
        #expect(configuration.registry.probesOtherEnvironment)
        #expect(configuration.registry.locationPrecisionKilometres == 1)
        #expect(configuration.registry.locationDays == 7)
        #expect(configuration.apns.endpoints.isEmpty)
        #expect(configuration.apps["news"]?.extraTopics == [])
        #expect(configuration.apps["news"]?.topicBundleIDs == ["com.example.news"])
    }

    @Test func explicitValues() throws {
        let configuration = try parse(
            """
            kafka: {bootstrap-servers: "broker:9092"}
            apns:
              endpoint: {host: all.local, port: 2197}
              endpoints:
                production: {host: production.local, port: 443}
            registry: {probe-other-environment: false, location-precision-km: 0.5, location-ttl-days: 30}
            breaker: {watch-notifications: 5000, min-notifications: 500, max-rejected-share: 0.25}
            apps:
              news:
                bundle-id: com.example.news
                extra-topics: [com.example.news.beta, com.example.companion]
                auth:
                  token: {team-id: ABCDE12345, key-id: KEY1234567, key-file: AuthKey.p8}
            """)
        #expect(configuration.breaker == BreakerSettings(watchNotifications: 5_000, minNotifications: 500, maxRejectedShare: 0.25))
        #expect(!configuration.registry.probesOtherEnvironment)
        #expect(configuration.registry.locationPrecisionKilometres == 0.5)
        #expect(configuration.registry.locationDays == 30)
        #expect(configuration.apns.endpoints == [.production: APNsEndpoint(host: "production.local", port: 443)])
        #expect(configuration.apns.endpoint == APNsEndpoint(host: "all.local", port: 2197))
        #expect(configuration.apps["news"]?.topicBundleIDs == ["com.example.news", "com.example.news.beta", "com.example.companion"])
    }

    @Test func errorsNameTheKey() {
        let cases: [(String, String)] = [
            ("breaker: {max-rejected-share: 1.5}", "breaker.max-rejected-share"),
            ("breaker: {max-rejected-share: -0.1}", "breaker.max-rejected-share"),
            ("breaker: {watch-notifications: 0}", "breaker.watch-notifications"),
            ("breaker: {watch-notifications: 100, min-notifications: 101}", "breaker.min-notifications"),
            ("registry: {probe-other-environment: sometimes}", "registry.probe-other-environment"),
            ("registry: {location-precision-km: 0}", "registry.location-precision-km"),
            ("registry: {location-precision-km: 101}", "registry.location-precision-km"),
            ("registry: {location-ttl-days: 0}", "registry.location-ttl-days"),
            ("registry: {location-ttl-days: 31}", "registry.location-ttl-days"),
            ("apns: {endpoints: {staging: {host: x}}}", "apns.endpoints.staging"),
            ("apns: {endpoints: {sandbox: {port: 1}}}", "apns.endpoints.sandbox.host"),
        ]
        for (section, key) in cases {
            let error = parseError(
                "kafka: {bootstrap-servers: b}\n\(section)\n" + minimalYAML.split(separator: "\n").dropFirst(2).joined(separator: "\n"))
            #expect(error?.key == key, "\(section): \(String(describing: error))")
        }
        let topic = parseError(minimalYAML + "    extra-topics: [\"com.example has space\"]\n")
        #expect(topic?.key == "apps.news.extra-topics")
    }
}
