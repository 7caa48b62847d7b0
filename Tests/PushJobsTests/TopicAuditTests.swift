import PushConfiguration
import PushJobs
import Testing

@Suite("Topic audit")
struct TopicAuditTests {
    let layout = KafkaTopicLayout(
        jobsPartitions: 12, deliveriesPartitions: 48, feedbackPartitions: 6, deadLetterPartitions: 6, onlinePartitions: 12, replicationFactor: 3)

    @Test("the layout names the five topics in pipeline order")
    func requirements() {
        #expect(
            TopicAudit.requirements(layout) == [
                TopicRequirement(name: "push.jobs", partitions: 12, replicationFactor: 3),
                TopicRequirement(name: "push.deliveries", partitions: 48, replicationFactor: 3),
                TopicRequirement(name: "push.feedback", partitions: 6, replicationFactor: 3),
                TopicRequirement(name: "push.dlq", partitions: 6, replicationFactor: 3),
                TopicRequirement(name: "push.online", partitions: 12, replicationFactor: 3),
            ])
    }

    @Test("missing, fewer partitions, fewer replicas, both, and sufficient (larger counts too); other topics ignored")
    func findings() {
        let findings = TopicAudit.findings(
            TopicAudit.requirements(layout),
            observed: [
                "push.jobs": ObservedTopic(partitions: 24, replicationFactor: 3),
                "push.deliveries": ObservedTopic(partitions: 8, replicationFactor: 1),
                "push.feedback": ObservedTopic(partitions: 6, replicationFactor: 2),
                "push.online": ObservedTopic(partitions: 12, replicationFactor: 3),
                "some.other.topic": ObservedTopic(partitions: 1, replicationFactor: 1),
            ])
        #expect(
            findings == [
                .sufficient(topic: "push.jobs", partitions: 24, replicationFactor: 3),
                .fewerPartitions(topic: "push.deliveries", has: 8, wanted: 48),
                .fewerReplicas(topic: "push.deliveries", has: 1, wanted: 3),
                .fewerReplicas(topic: "push.feedback", has: 2, wanted: 3),
                .missing(TopicRequirement(name: "push.dlq", partitions: 6, replicationFactor: 3)),
                .sufficient(topic: "push.online", partitions: 12, replicationFactor: 3),
            ])
        #expect(findings.map(\.isShortfall) == [false, true, true, true, true, false])
        #expect(TopicAudit.missing(findings).map(\.name) == ["push.dlq"])
        #expect(findings[1].description.contains("at most 8 workers"))
        #expect(findings[4].description == "push.dlq: missing (the layout asks for 6 partitions)")
    }

    @Test("without a configured replication factor, replicas are not judged")
    func brokersDefaultReplication() {
        var layout = self.layout
        layout.replicationFactor = nil
        let observed = Dictionary(
            uniqueKeysWithValues: TopicAudit.requirements(layout).map {
                ($0.name, ObservedTopic(partitions: $0.partitions, replicationFactor: 1))
            })
        let findings = TopicAudit.findings(TopicAudit.requirements(layout), observed: observed)
        #expect(findings.allSatisfy { !$0.isShortfall })
        #expect(TopicAudit.findings(TopicAudit.requirements(layout), observed: [:]).count == 5)
    }
}
