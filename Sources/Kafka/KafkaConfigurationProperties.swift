import CRdKafka

/// librdkafka configuration properties: any key librdkafka documents (`security.protocol`,
/// `sasl.mechanism`, `ssl.ca.location`, …) passes through unchanged.
///
/// The typed configuration structs set the properties they own; anything in `properties`
/// overrides them, so an operator can tune any setting without a code change.
public struct KafkaConfigurationProperties: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    public private(set) var values: [String: String]

    public init(_ values: [String: String] = [:]) {
        self.values = values
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.values = Dictionary(elements, uniquingKeysWith: { _, last in last })
    }

    public subscript(key: String) -> String? {
        get { values[key] }
        set { values[key] = newValue }
    }

    /// These properties with `overrides` laid over them.
    public func merging(_ overrides: KafkaConfigurationProperties) -> KafkaConfigurationProperties {
        KafkaConfigurationProperties(values.merging(overrides.values, uniquingKeysWith: { _, new in new }))
    }

    /// Keys whose values must never appear in logs or errors.
    static let secretKeys: Set<String> = [
        "sasl.password", "ssl.key.password", "ssl.key.pem", "ssl_key", "ssl.keystore.password",
        "sasl.oauthbearer.client.secret",
    ]

    /// Builds a librdkafka configuration object. The caller owns the result until it hands it
    /// to `rd_kafka_new`.
    func makeRDKafkaConf() throws(KafkaError) -> OpaquePointer {
        guard let conf = rd_kafka_conf_new() else {
            throw KafkaError(code: .configuration, message: "rd_kafka_conf_new failed")
        }
        var errorText = [CChar](repeating: 0, count: 512)
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            let result = rd_kafka_conf_set(conf, key, value, &errorText, errorText.count)
            if result != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                let shown = Self.secretKeys.contains(key) ? "<redacted>" : value
                let reason = String(cBuffer: errorText)
                throw KafkaError(
                    code: .configuration, message: "property '\(key)'='\(shown)' rejected: \(reason)")
            }
        }
        return conf
    }
}
