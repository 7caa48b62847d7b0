import Testing

@testable import Kafka

/// A member's group state from librdkafka's statistics report (`cgrp`), behind
/// `pushfleet_kafka_group_rebalancing`.
@Suite("Consumer group state from librdkafka's statistics")
struct KafkaGroupStateTests {
    /// A consumer's report, cut down to the shape librdkafka emits (STATISTICS.md): top-level
    /// fields, brokers with their partitions, topics, and the group last.
    func report(state: String, joinState: String) -> [UInt8] {
        Array(
            """
            {"name":"pushfleet-send#consumer-2","client_id":"pushfleet-send","type":"consumer","ts":8123456789,\
            "time":1796464800,"replyq":0,"msg_cnt":0,"brokers":{"127.0.0.1:9092/1":{"name":"127.0.0.1:9092/1",\
            "nodeid":1,"state":"UP","rtt":{"min":120,"max":950,"avg":300},"toppars":{"push.deliveries-0":\
            {"topic":"push.deliveries","partition":0}}}},"topics":{"push.deliveries":{"topic":"push.deliveries",\
            "partitions":{"0":{"partition":0,"fetch_state":"active","consumer_lag":0}}}},"cgrp":{"state":"\(state)",\
            "stateage":4012,"join_state":"\(joinState)","rebalance_age":3990,"rebalance_cnt":2,\
            "rebalance_reason":"group is rebalancing","assignment_size":4}}
            """.utf8)
    }

    @Test("steady once up and done joining; in a rebalance in every other join state")
    func steadyOnlyBetweenRebalances() throws {
        let steady = try #require(KafkaGroupState(statistics: report(state: "up", joinState: "steady")))
        #expect(steady == KafkaGroupState(state: "up", joinState: "steady"))
        #expect(steady.isSteady)
        for joinState in ["init", "wait-join", "wait-metadata", "wait-sync", "wait-assign-call", "wait-unassign-call", "wait-unassign-to-complete"] {
            let state = try #require(KafkaGroupState(statistics: report(state: "up", joinState: joinState)))
            #expect(!state.isSteady, "\(joinState)")
        }
        // Without its coordinator the member is not in the group, whatever it last did.
        #expect(KafkaGroupState(statistics: report(state: "wait-coord", joinState: "steady"))?.isSteady == false)
    }

    @Test("a report without a group, or not JSON, gives no state")
    func reportsWithoutAGroup() {
        let producer = #"{"name":"pushfleet#producer-1","type":"producer","ts":1,"brokers":{},"topics":{}}"#
        #expect(KafkaGroupState(statistics: Array(producer.utf8)) == nil)
        #expect(KafkaGroupState(statistics: Array("{\"cgrp\":".utf8)) == nil)
        #expect(KafkaGroupState(statistics: [UInt8]()) == nil)
    }
}
