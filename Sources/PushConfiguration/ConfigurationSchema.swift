/// The shape of the configuration file: which keys exist where. It is the single source of key
/// names for rejecting unknown keys and for matching `PUSHFLEET__…` override segments.
indirect enum ConfigurationSchema: Sendable {
    /// A leaf value (scalar or list); its type is checked when decoding.
    case value
    /// A mapping with a fixed set of kebab-case keys, in documentation order.
    case section([(key: String, schema: ConfigurationSchema)])
    /// A mapping with free-form keys and scalar values (`kafka.properties`).
    case properties
    /// A mapping keyed by app id, each value shaped by the given schema (`apps`).
    case apps(ConfigurationSchema)

    /// The whole file.
    static let root: ConfigurationSchema = .section([
        (
            "kafka",
            .section([
                ("bootstrap-servers", .value), ("group-prefix", .value), ("properties", .properties),
                ("assignment-strategy", .value), ("group-instance-id", .value), ("session-timeout-ms", .value),
                (
                    "topics",
                    .section([
                        (
                            "partitions",
                            .section([("jobs", .value), ("deliveries", .value), ("feedback", .value), ("dead-letters", .value), ("online", .value)])
                        ),
                        ("replication-factor", .value), ("min-insync-replicas", .value),
                    ])
                ),
            ])
        ),
        (
            "redis",
            .section([
                ("host", .value), ("port", .value), ("username", .value), ("password", .value),
                ("password-file", .value), ("database", .value), ("pool-size", .value), ("cluster-nodes", .value),
                ("replica-acknowledgements", .value), ("replica-ack-timeout-ms", .value),
            ])
        ),
        (
            "apns",
            .section([
                ("endpoint", .section([("host", .value), ("port", .value)])),
                (
                    "endpoints",
                    .section([
                        ("sandbox", .section([("host", .value), ("port", .value)])),
                        ("production", .section([("host", .value), ("port", .value)])),
                    ])
                ),
                (
                    "binary-endpoints",
                    .section([
                        ("sandbox", .section([("host", .value), ("port", .value)])),
                        ("production", .section([("host", .value), ("port", .value)])),
                    ])
                ),
                (
                    "feedback-endpoints",
                    .section([
                        ("sandbox", .section([("host", .value), ("port", .value)])),
                        ("production", .section([("host", .value), ("port", .value)])),
                    ])
                ),
                ("ca-file", .value), ("port", .value), ("connections-per-pool", .value), ("min-connections-per-pool", .value),
                ("streams-per-connection", .value),
                ("request-timeout-ms", .value), ("event-loops", .value), ("binary-quiet-period-ms", .value),
                ("feedback-interval-seconds", .value),
                ("credential-suspension-seconds", .value),
            ])
        ),
        (
            "registry",
            .section([("shards", .value), ("probe-other-environment", .value), ("location-precision-km", .value), ("location-ttl-days", .value)])
        ),
        (
            "worker",
            .section([
                ("chunk-size", .value), ("chunks-in-flight", .value), ("expansions-in-flight", .value), ("notifications-in-flight", .value),
                ("permit-block", .value), ("resend-poll-ms", .value), ("shutdown-deadline-seconds", .value), ("settle-patience-ms", .value),
            ])
        ),
        (
            "resend",
            .section([
                ("max-attempts", .value), ("base-delay-ms", .value), ("max-delay-ms", .value),
                ("max-age-seconds", .value), ("lease-ms", .value),
            ])
        ),
        (
            "breaker",
            .section([
                ("watch-notifications", .value), ("min-notifications", .value), ("max-rejected-share", .value),
            ])
        ),
        ("jobs", .section([("recall-window-hours", .value)])),
        ("metrics", .section([("port", .value)])),
        ("tracing", .section([("otlp-endpoint", .value), ("sample-rate", .value)])),
        ("api", .section([("host", .value), ("port", .value), ("max-body-bytes", .value)])),
        (
            "gateway",
            .section([
                ("host", .value), ("port", .value), ("id", .value), ("secret-file", .value), ("token-ttl-seconds", .value),
                ("ping-interval-seconds", .value), ("idle-timeout-seconds", .value), ("max-frame-bytes", .value),
                ("messages-per-second", .value), ("message-burst", .value), ("ack-timeout-ms", .value), ("deliveries-in-flight", .value),
                ("inbox-size", .value), ("inbox-ttl-seconds", .value),
            ])
        ),
        (
            "apps",
            .apps(
                .section([
                    ("bundle-id", .value), ("extra-topics", .value), ("environments", .value), ("transport", .value),
                    // The methods, then an environment's own (Tests/deploy reads this table as text:
                    // it stays literal).
                    (
                        "auth",
                        .section([
                            ("token", .section([("team-id", .value), ("key-id", .value), ("key-file", .value)])),
                            ("certificate", .section([("certificate-file", .value), ("key-file", .value)])),
                            ("pkcs12", .section([("file", .value), ("passphrase-file", .value)])),
                            (
                                "sandbox",
                                .section([
                                    ("token", .section([("team-id", .value), ("key-id", .value), ("key-file", .value)])),
                                    ("certificate", .section([("certificate-file", .value), ("key-file", .value)])),
                                    ("pkcs12", .section([("file", .value), ("passphrase-file", .value)])),
                                ])
                            ),
                            (
                                "production",
                                .section([
                                    ("token", .section([("team-id", .value), ("key-id", .value), ("key-file", .value)])),
                                    ("certificate", .section([("certificate-file", .value), ("key-file", .value)])),
                                    ("pkcs12", .section([("file", .value), ("passphrase-file", .value)])),
                                ])
                            ),
                        ])
                    ),
                    ("rate-per-second", .value), ("burst", .value), ("sleep-after", .value),
                    ("sleep-ms", .value), ("connections-per-pool", .value), ("api-keys", .value), ("api-keys-file", .value),
                    ("time-zone", .value),
                ]))
        ),
    ])

    /// `path.key`, or `key` at the top level; an empty key (YAML allows `"": x`) shows as `''`, so that an error always
    /// names a key.
    static func join(_ path: String, _ key: String) -> String {
        let segment = key.isEmpty ? "''" : key
        return path.isEmpty ? segment : "\(path).\(segment)"
    }

    /// Whether `id` is a valid app id: 1–64 bytes of `A-Z a-z 0-9 . _ -`.
    static func isValidAppID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        return (1...64).contains(bytes.count)
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default:
                    false
                }
            }
    }
}
