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

    @Test("a rebalance is incremental when librdkafka says COOPERATIVE, and by the configured strategy when it cannot say")
    func rebalanceProtocolFallsBackToTheStrategy() {
        #expect(KafkaConsumer.isCooperative(protocolName: "COOPERATIVE", strategy: "range"))
        #expect(!KafkaConsumer.isCooperative(protocolName: "EAGER", strategy: "cooperative-sticky"))
        #expect(!KafkaConsumer.isCooperative(protocolName: "NONE", strategy: "cooperative-sticky"))
        // A closing consumer's group queue refuses the request: rd_kafka_rebalance_protocol
        // answers NULL in the revoke callback of the close.
        #expect(KafkaConsumer.isCooperative(protocolName: nil, strategy: "cooperative-sticky"))
        #expect(!KafkaConsumer.isCooperative(protocolName: nil, strategy: "range,roundrobin"))
    }
}
