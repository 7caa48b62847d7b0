import APNsCore

/// Turns a validated-shape configuration tree into ``PushFleetConfiguration``, applying defaults and
/// checking every value's type and range.
struct ConfigurationParser {
    /// The directory relative file paths are resolved against.
    let baseDirectory: String

    /// Decodes the whole file (`nil` for an empty document).
    func configuration(from root: ConfigNode?) throws(ConfigurationError) -> PushFleetConfiguration {
        let file = try ConfigSection(root, path: "", fallback: .file(line: nil))
        return PushFleetConfiguration(
            kafka: try kafka(file.section("kafka")),
            redis: try redis(file.section("redis")),
            apns: try apns(file.section("apns")),
            registry: try registry(file.section("registry")),
            worker: try worker(file.section("worker")),
            resend: try resend(file.section("resend")),
            breaker: try breaker(file.section("breaker")),
            jobs: try jobs(file.section("jobs")),
            metrics: try metrics(file.section("metrics")),
            api: try api(file.section("api")),
            gateway: try gateway(file.section("gateway")),
            tracing: try tracing(file.section("tracing")),
            apps: try apps(file, key: "apps"))
    }

    /// `kafka:`.
    func kafka(_ section: ConfigSection) throws(ConfigurationError) -> KafkaSettings {
        let propertiesSection = try section.section("properties")
        var properties: [String: String] = [:]
        for entry in propertiesSection.entries {
            guard case .scalar(let scalar, _) = entry.value else {
                throw propertiesSection.error(entry.key, "expected a string, number or boolean, found \(entry.value.article)")
            }
            switch scalar.kind {
            case .null: continue
            case .bool: properties[entry.key] = ConfigScalarKind.boolValue(scalar.text) ? "true" : "false"
            case .int: properties[entry.key] = ConfigSection.decimalInteger(scalar.text).map(String.init) ?? scalar.text
            case .float, .string: properties[entry.key] = scalar.text
            }
        }
        let strategy = try section.string("assignment-strategy") ?? "cooperative-sticky"
        guard KafkaSettings.assignmentStrategies.contains(strategy) else {
            throw section.error(
                "assignment-strategy", "must be one of \(KafkaSettings.assignmentStrategies.sorted().joined(separator: ", ")), got '\(strategy)'")
        }
        let instanceID = try section.string("group-instance-id")
        if let instanceID,
            instanceID.isEmpty || instanceID.count > 200
                || !instanceID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
        {
            throw section.error("group-instance-id", "must be 1 to 200 characters of A-Z, a-z, 0-9, '.', '_' and '-', got '\(instanceID)'")
        }
        return KafkaSettings(
            bootstrapServers: try section.requiredString("bootstrap-servers"),
            groupPrefix: try section.string("group-prefix") ?? "pushfleet",
            properties: properties,
            assignmentStrategy: strategy,
            groupInstanceID: instanceID,
            sessionTimeoutMilliseconds: try section.integer("session-timeout-ms", default: 6_000, minimum: 1_000, maximum: 3_600_000),
            topics: try topicLayout(section.section("topics")))
    }

    /// `kafka.topics:`.
    func topicLayout(_ section: ConfigSection) throws(ConfigurationError) -> KafkaTopicLayout {
        let partitions = try section.section("partitions")
        let defaults = KafkaTopicLayout()
        // Kafka's limit per topic is far higher; beyond this a typo is likelier than a plan.
        let most = 10_000
        let layout = KafkaTopicLayout(
            jobsPartitions: try partitions.integer("jobs", default: defaults.jobsPartitions, minimum: 1, maximum: most),
            deliveriesPartitions: try partitions.integer("deliveries", default: defaults.deliveriesPartitions, minimum: 1, maximum: most),
            feedbackPartitions: try partitions.integer("feedback", default: defaults.feedbackPartitions, minimum: 1, maximum: most),
            deadLetterPartitions: try partitions.integer("dead-letters", default: defaults.deadLetterPartitions, minimum: 1, maximum: most),
            onlinePartitions: try partitions.integer("online", default: defaults.onlinePartitions, minimum: 1, maximum: most),
            replicationFactor: try section.integer("replication-factor", minimum: 1, maximum: 32),
            minInSyncReplicas: try section.integer("min-insync-replicas", minimum: 1, maximum: 32))
        if let replicas = layout.replicationFactor, let inSync = layout.minInSyncReplicas, inSync > replicas {
            throw section.error(
                "min-insync-replicas", "must not exceed \(section.keyPath("replication-factor")) (\(replicas)), got \(inSync): no write could succeed"
            )
        }
        return layout
    }

    /// `redis:`.
    func redis(_ section: ConfigSection) throws(ConfigurationError) -> RedisSettings {
        if section.has("password") && section.has("password-file") {
            throw section.error(
                "password-file", "cannot be set together with \(section.keyPath("password")); set only one")
        }
        var clusterNodes: [String] = []
        if section.has("cluster-nodes") {
            for item in try stringList(section, key: "cluster-nodes", of: "host:port addresses") {
                guard let colon = item.text.lastIndex(of: ":"), colon != item.text.startIndex,
                    let port = Int(item.text[item.text.index(after: colon)...]), (1...65535).contains(port)
                else {
                    throw ConfigurationError(
                        key: section.keyPath("cluster-nodes"), message: "'\(item.text)' is not host:port", origin: item.origin)
                }
                clusterNodes.append(item.text)
            }
            if (try section.integer("database", minimum: 0) ?? 0) != 0 {
                throw section.error("database", "must be 0 with \(section.keyPath("cluster-nodes")): a Redis Cluster has one database")
            }
        }
        return RedisSettings(
            clusterNodes: clusterNodes,
            host: try section.string("host") ?? "127.0.0.1",
            port: try section.integer("port", default: 6379, minimum: 1, maximum: 65535),
            username: try section.string("username"),
            password: try section.string("password"),
            passwordFile: try section.path("password-file", baseDirectory: baseDirectory),
            database: try section.integer("database", default: 0, minimum: 0),
            poolSize: try section.integer("pool-size", default: 4, minimum: 1),
            replicaAcknowledgements: try section.integer("replica-acknowledgements", default: 1, minimum: 0),
            replicaAcknowledgementTimeout: .milliseconds(try section.integer("replica-ack-timeout-ms", default: 500, minimum: 1)))
    }

    /// `apns:`.
    func apns(_ section: ConfigSection) throws(ConfigurationError) -> APNsSettings {
        var endpoint: APNsEndpoint?
        if section.has("endpoint") {
            endpoint = try self.endpoint(section.section("endpoint"))
        }
        var endpoints: [APNsEnvironment: APNsEndpoint] = [:]
        let perEnvironment = try section.section("endpoints")
        for environment in APNsEnvironment.allCases where perEnvironment.has(environment.rawValue) {
            endpoints[environment] = try self.endpoint(perEnvironment.section(environment.rawValue))
        }
        let port = try section.integer("port", default: 443, minimum: 1, maximum: 65535)
        guard port == 443 || port == 2197 else {
            throw section.error("port", "must be 443 or 2197, got \(port)")
        }
        var settings = APNsSettings(
            endpoint: endpoint,
            endpoints: endpoints,
            caFile: try section.path("ca-file", baseDirectory: baseDirectory),
            port: port,
            connectionsPerPool: try section.integer("connections-per-pool", default: 128, minimum: 1),
            minConnectionsPerPool: try section.integer("min-connections-per-pool", default: 1, minimum: 1),
            streamsPerConnection: try section.integer("streams-per-connection", default: 1000, minimum: 1, maximum: 1000),
            requestTimeout: .milliseconds(try section.integer("request-timeout-ms", default: 10_000, minimum: 1)),
            eventLoops: try section.integer("event-loops", minimum: 1))
        for (key, path) in [("binary-endpoints", \APNsSettings.binaryEndpoints), ("feedback-endpoints", \APNsSettings.feedbackEndpoints)] {
            let perEnvironment = try section.section(key)
            for environment in APNsEnvironment.allCases where perEnvironment.has(environment.rawValue) {
                settings[keyPath: path][environment] = try self.endpoint(perEnvironment.section(environment.rawValue))
            }
        }
        settings.binaryQuietPeriod = .milliseconds(try section.integer("binary-quiet-period-ms", default: 500, minimum: 1))
        settings.feedbackInterval = .seconds(try section.integer("feedback-interval-seconds", default: 3600, minimum: 1))
        settings.credentialSuspension = .seconds(try section.integer("credential-suspension-seconds", default: 60, minimum: 1))
        return settings
    }

    /// `apns.endpoint:` and `apns.endpoints.<environment>:`.
    private func endpoint(_ section: ConfigSection) throws(ConfigurationError) -> APNsEndpoint {
        APNsEndpoint(
            host: try section.requiredString("host"),
            port: try section.integer("port", default: 443, minimum: 1, maximum: 65535))
    }

    /// `registry:`.
    func registry(_ section: ConfigSection) throws(ConfigurationError) -> RegistrySettings {
        let precision = try section.number("location-precision-km", minimum: 0.01) ?? 1
        guard precision <= 100 else {
            throw section.error("location-precision-km", "must be at most 100, got \(precision)")
        }
        return RegistrySettings(
            shards: try section.integer("shards", default: 16, minimum: 1, maximum: 2048),
            probesOtherEnvironment: try section.bool("probe-other-environment", default: true),
            locationPrecisionKilometres: precision,
            locationDays: try section.integer("location-ttl-days", default: 7, minimum: 1, maximum: 30))
    }

    /// `breaker:`.
    func breaker(_ section: ConfigSection) throws(ConfigurationError) -> BreakerSettings {
        let watch = try section.integer("watch-notifications", default: 2_000, minimum: 1)
        let minimum = try section.integer("min-notifications", default: 200, minimum: 1)
        guard minimum <= watch else {
            throw section.error(
                "min-notifications", "must be at most \(section.keyPath("watch-notifications")) (\(watch)), got \(minimum)")
        }
        let share = try section.number("max-rejected-share", minimum: 0) ?? 0.1
        guard share <= 1 else {
            throw section.error("max-rejected-share", "must be at most 1, got \(share)")
        }
        return BreakerSettings(watchNotifications: watch, minNotifications: minimum, maxRejectedShare: share)
    }

    /// `jobs:`.
    func jobs(_ section: ConfigSection) throws(ConfigurationError) -> JobsSettings {
        JobsSettings(recallWindow: .seconds(3600 * (try section.integer("recall-window-hours", default: 24, minimum: 1, maximum: 168))))
    }

    /// `worker:`.
    func worker(_ section: ConfigSection) throws(ConfigurationError) -> WorkerSettings {
        WorkerSettings(
            chunkSize: try section.integer("chunk-size", default: 1000, minimum: 1, maximum: 1000),
            chunksInFlight: try section.integer("chunks-in-flight", default: 32, minimum: 1),
            expansionsInFlight: try section.integer("expansions-in-flight", default: 1, minimum: 1),
            notificationsInFlight: try section.integer("notifications-in-flight", default: 32_000, minimum: 1),
            permitBlock: try section.integer("permit-block", default: 100, minimum: 1),
            resendPollInterval: .milliseconds(try section.integer("resend-poll-ms", default: 200, minimum: 1)),
            shutdownDeadline: .seconds(try section.integer("shutdown-deadline-seconds", default: 30, minimum: 1)),
            settlePatience: .milliseconds(try section.integer("settle-patience-ms", default: 30, minimum: 1)))
    }

    /// `resend:`.
    func resend(_ section: ConfigSection) throws(ConfigurationError) -> ResendSettings {
        let maxAttempts = try section.integer("max-attempts", default: 5, minimum: 1)
        let baseDelay = try section.integer("base-delay-ms", default: 1000, minimum: 0)
        let maxDelay = try section.integer("max-delay-ms", default: 300_000, minimum: 0)
        guard maxDelay >= baseDelay else {
            throw section.error(
                "max-delay-ms", "must be at least \(section.keyPath("base-delay-ms")) (\(baseDelay)), got \(maxDelay)")
        }
        return ResendSettings(
            maxAttempts: maxAttempts,
            baseDelay: .milliseconds(baseDelay),
            maxDelay: .milliseconds(maxDelay),
            maxAge: .seconds(try section.integer("max-age-seconds", default: 3600, minimum: 1)),
            lease: .milliseconds(try section.integer("lease-ms", default: 30_000, minimum: 1)))
    }

    /// `api:`.
    func api(_ section: ConfigSection) throws(ConfigurationError) -> APISettings {
        APISettings(
            host: try section.string("host") ?? "0.0.0.0",
            port: try section.integer("port", default: 8080, minimum: 0, maximum: 65535),
            maxBodyBytes: try section.integer("max-body-bytes", default: 2 * 1024 * 1024, minimum: 1024))
    }

    /// `gateway:`.
    func gateway(_ section: ConfigSection) throws(ConfigurationError) -> GatewaySettings {
        let id = try section.string("id")
        if let id, !ConfigurationSchema.isValidAppID(id) {
            throw section.error("id", "must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-', got '\(id)'")
        }
        let ping = try section.integer("ping-interval-seconds", default: 25, minimum: 1, maximum: 300)
        let idle = try section.integer("idle-timeout-seconds", default: 60, minimum: 2)
        guard idle >= 2 * ping else {
            throw section.error(
                "idle-timeout-seconds", "must be at least twice \(section.keyPath("ping-interval-seconds")) (\(2 * ping)), got \(idle)")
        }
        return GatewaySettings(
            host: try section.string("host") ?? "0.0.0.0",
            port: try section.integer("port", default: 8090, minimum: 0, maximum: 65535),
            id: id,
            secretFile: try section.path("secret-file", baseDirectory: baseDirectory),
            tokenTimeToLive: .seconds(try section.integer("token-ttl-seconds", default: 600, minimum: 1, maximum: 86_400)),
            pingInterval: .seconds(ping),
            idleTimeout: .seconds(idle),
            maxFrameBytes: try section.integer("max-frame-bytes", default: 16_384, minimum: 125, maximum: 1 << 20),
            messagesPerSecond: try section.integer("messages-per-second", default: 10, minimum: 1),
            messageBurst: try section.integer("message-burst", default: 20, minimum: 1),
            ackTimeout: .milliseconds(try section.integer("ack-timeout-ms", default: 5_000, minimum: 100, maximum: 60_000)),
            deliveriesInFlight: try section.integer("deliveries-in-flight", default: 256, minimum: 1, maximum: 10_000),
            inboxSize: try section.integer("inbox-size", default: 100, minimum: 1, maximum: 10_000),
            inboxTimeToLive: .seconds(try section.integer("inbox-ttl-seconds", default: 604_800, minimum: 60, maximum: 2_592_000)))
    }

    /// `tracing:`.
    func tracing(_ section: ConfigSection) throws(ConfigurationError) -> TracingSettings {
        let endpoint = try section.string("otlp-endpoint")
        if let endpoint {
            let lowered = endpoint.lowercased()
            guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), endpoint.count > "https://".count else {
                throw section.error("otlp-endpoint", "expected an http:// or https:// URL of an OTLP/HTTP traces receiver, got '\(endpoint)'")
            }
        }
        let rate = try section.number("sample-rate", minimum: 0) ?? 1
        guard rate <= 1 else {
            throw section.error("sample-rate", "must be at most 1, got \(ConfigSection.format(rate))")
        }
        return TracingSettings(otlpEndpoint: endpoint, sampleRate: rate)
    }

    /// `metrics:`.
    func metrics(_ section: ConfigSection) throws(ConfigurationError) -> MetricsSettings {
        MetricsSettings(port: try section.integer("port", minimum: 0, maximum: 65535))
    }
}
