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

    @Test("a lost member is noticed by every live member within its session timeout and two heartbeats")
    func lostMemberNoticed() {
        #expect(KafkaConsumerConfiguration.lostMemberNoticed(sessionTimeoutMilliseconds: 6_000) == .seconds(10))
        #expect(KafkaConsumerConfiguration.lostMemberNoticed(sessionTimeoutMilliseconds: 45_000) == .seconds(51))
    }

    @Test("librdkafka reports the group state only when asked, at the configured interval")
    func groupStateInterval() {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:9092", groupID: "g", topics: ["t"])
        #expect(configuration.rdKafkaProperties["statistics.interval.ms"] == nil)
        configuration.groupStateInterval = .seconds(1)
        #expect(configuration.rdKafkaProperties["statistics.interval.ms"] == "1000")
        configuration.groupStateInterval = .microseconds(10)
        #expect(configuration.rdKafkaProperties["statistics.interval.ms"] == "1")
        configuration.properties = ["statistics.interval.ms": "250"]
        #expect(configuration.rdKafkaProperties["statistics.interval.ms"] == "250")
    }
}
