import Testing

@testable import Kafka

@Suite("Consumer group timing")
struct KafkaConsumerConfigurationTests {
    @Test("the heartbeat is a third of the session timeout, at most 3 s, and an explicit property wins")
    func heartbeatFollowsTheSessionTimeout() {
        #expect(KafkaConsumerConfiguration.heartbeatIntervalMilliseconds(sessionTimeout: 6_000) == 2_000)
        #expect(KafkaConsumerConfiguration.heartbeatIntervalMilliseconds(sessionTimeout: 1_000) == 333)
        #expect(KafkaConsumerConfiguration.heartbeatIntervalMilliseconds(sessionTimeout: 45_000) == 3_000)

        var configuration = KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:9092", groupID: "g", topics: ["t"])
        #expect(configuration.sessionTimeoutMilliseconds == 6_000)
        #expect(configuration.rdKafkaProperties["session.timeout.ms"] == "6000")
        #expect(configuration.rdKafkaProperties["heartbeat.interval.ms"] == "2000")
        configuration.sessionTimeoutMilliseconds = 30_000
        #expect(configuration.rdKafkaProperties["heartbeat.interval.ms"] == "3000")
        configuration.properties = ["heartbeat.interval.ms": "500"]
        #expect(configuration.rdKafkaProperties["heartbeat.interval.ms"] == "500")
    }
}
