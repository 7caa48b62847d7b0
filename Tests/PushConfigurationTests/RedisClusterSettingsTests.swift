import PushConfiguration
import Testing

/// `redis.cluster-nodes` and the replica confirmation of a cluster's writes.
@Suite struct RedisClusterSettingsTests {
    static func yaml(_ redis: String) -> String {
        "kafka: {bootstrap-servers: b}\nredis: \(redis)\n" + minimalYAML.split(separator: "\n").dropFirst(2).joined(separator: "\n")
    }

    @Test func defaultsAreOneServerAndOneConfirmingReplica() throws {
        let redis = try parse(minimalYAML).redis
        #expect(redis.clusterNodes.isEmpty)
        #expect(redis.replicaAcknowledgements == 1 && redis.replicaAcknowledgementTimeout == .milliseconds(500))
    }

    @Test func seedsAndConfirmation() throws {
        let redis = try parse(
            Self.yaml(#"{cluster-nodes: ["10.0.0.1:6379", "redis-2.internal:7000"], replica-acknowledgements: 0, replica-ack-timeout-ms: 50}"#)
        ).redis
        #expect(redis.clusterNodes == ["10.0.0.1:6379", "redis-2.internal:7000"])
        #expect(redis.replicaAcknowledgements == 0 && redis.replicaAcknowledgementTimeout == .milliseconds(50))
        let overridden = try parse(minimalYAML, environment: ["PUSHFLEET__REDIS__CLUSTER_NODES": "a:1,b:2"]).redis
        #expect(overridden.clusterNodes == ["a:1", "b:2"])
    }

    @Test func errorsNameTheKey() {
        #expect(parseError(Self.yaml(#"{cluster-nodes: ["10.0.0.1"]}"#))?.key == "redis.cluster-nodes")
        #expect(parseError(Self.yaml(#"{cluster-nodes: ["host:99999"]}"#))?.key == "redis.cluster-nodes")
        #expect(parseError(Self.yaml(#"{cluster-nodes: ["a:1"], database: 2}"#))?.key == "redis.database")
        #expect(parseError(Self.yaml("{replica-acknowledgements: -1}"))?.key == "redis.replica-acknowledgements")
    }
}
