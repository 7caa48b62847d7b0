import Testing

@testable import Kafka

@Suite("Cooperative-sticky guard for librdkafka before 2.3")
struct CooperativeAssignorGuardTests {
    @Test("a cooperative consumer's handle is kept at deinit until its first assignment only where librdkafka would abort")
    func guardAppliesToCooperativeConsumersOnOldLibraries() {
        // librdkafka #4381: fixed in 2.3.0; Debian 12 ships 2.0.2 (0x020002ff).
        #expect(KafkaConsumer.destroyBeforeFirstAssignmentAborts(strategy: "cooperative-sticky", libraryVersion: 0x0200_02ff))
        #expect(KafkaConsumer.destroyBeforeFirstAssignmentAborts(strategy: "cooperative-sticky", libraryVersion: 0x0202_00ff))
        #expect(!KafkaConsumer.destroyBeforeFirstAssignmentAborts(strategy: "cooperative-sticky", libraryVersion: 0x0203_00ff))
        #expect(!KafkaConsumer.destroyBeforeFirstAssignmentAborts(strategy: "range,roundrobin", libraryVersion: 0x0200_02ff))
        #expect(!KafkaConsumer.destroyBeforeFirstAssignmentAborts(strategy: "range", libraryVersion: 0x0200_02ff))
    }
}
