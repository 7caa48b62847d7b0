import EmbeddedKafka
import Foundation
import Kafka
import PipelineTestSupport
import Synchronization
import Testing

/// Producer, consumer and admin against the embedded cluster (librdkafka's mock brokers over
/// loopback TCP), or against a Tansu broker with `PUSHFLEET_TEST_KAFKA=tansu`
/// (``KafkaTestSupport/kind``). Tests of the mock's fault hooks and limits run on it only.
@Suite struct KafkaClientTests {
    let kafka: LocalKafka

    init() async throws {
        kafka = try await KafkaTestSupport.start(brokers: 3)
    }

    @Test func producedMessagesAreConsumedWithKeysValuesAndHeaders() async throws {
        let topic = KafkaTestSupport.uniqueName("roundtrip")
        try await kafka.createTopic(topic, partitions: 4)
        let producer = try KafkaTestSupport.producer(kafka)
        let messages = (0..<1_000).map { index in
            KafkaProducerMessage(
                topic: topic, key: "key-\(index)", value: Array("value-\(index)".utf8),
                headers: [KafkaHeader(name: "index", value: String(index))])
        }
        let reports = try await producer.send(messages)
        #expect(reports.count == 1_000)
        #expect(Set(reports.map(\.partition)).isSubset(of: [0, 1, 2, 3]))
        for partition in Set(reports.map(\.partition)) {
            let offsets = reports.filter { $0.partition == partition }.compactMap(\.offset)
            #expect(offsets == offsets.sorted(), "offsets rise in send order within a partition")
        }
        await producer.close()

        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: kafka.bootstrapServers, groupID: KafkaTestSupport.uniqueName("group"),
                topics: [topic]),
            logger: KafkaTestSupport.logger)
        var seen: [String: KafkaConsumerMessage] = [:]
        for await message in consumer.messages {
            let key = String(decoding: message.key ?? [], as: UTF8.self)
            seen[key] = message
            consumer.markProcessed(message)
            if seen.count == 1_000 { break }
        }
        await consumer.close()
        for index in 0..<1_000 {
            let message = try #require(seen["key-\(index)"])
            #expect(message.value == Array("value-\(index)".utf8))
            #expect(message.headers == [KafkaHeader(name: "index", value: String(index))])
            #expect(message.timestampMilliseconds != nil)
        }
        // A message with a key lands where the producer said it did.
        let report = reports[123]
        #expect(seen["key-123"]?.partition == report.partition)
        #expect(seen["key-123"]?.offset == report.offset)
    }

    @Test func batchedAndSingleEnqueuesKeepKeysPartitionsHeadersAndOrder() async throws {
        // Runs of one topic without headers are enqueued as one librdkafka batch; a message with
        // headers, or of another topic, ends a run and goes on its own. Both must agree.
        let topic = KafkaTestSupport.uniqueName("runs")
        let other = KafkaTestSupport.uniqueName("runs-other")
        try await kafka.createTopic(topic, partitions: 4)
        try await kafka.createTopic(other, partitions: 2)
        let producer = try KafkaTestSupport.producer(kafka)
        var messages: [KafkaProducerMessage] = []
        for index in 0..<300 {
            let key: [UInt8] = index == 150 ? [] : Array("key-\(index)".utf8)
            let value: [UInt8] = index == 151 ? [] : Array("value-\(index)".utf8)
            let partition: Int32? = index % 7 == 0 ? 2 : nil
            let headers: [KafkaHeader] = index % 50 == 0 ? [KafkaHeader(name: "index", value: String(index))] : []
            messages.append(
                KafkaProducerMessage(
                    topic: index % 100 == 99 ? other : topic, key: key, value: value, partition: partition, headers: headers))
        }
        let reports = try await producer.send(messages)
        #expect(reports.count == 300)
        for (index, report) in reports.enumerated() {
            #expect(report.topic == messages[index].topic, "message \(index)")
            if index % 7 == 0 { #expect(report.partition == 2, "message \(index)") }
        }

        // The partitioner places a key the same way on both paths.
        let twins = try await producer.send([
            KafkaProducerMessage(topic: topic, key: "twin", value: [1], headers: [KafkaHeader(name: "h", value: "1")]),
            KafkaProducerMessage(topic: topic, key: "twin", value: [2]),
            KafkaProducerMessage(topic: topic, key: "twin", value: [3]),
        ])
        #expect(Set(twins.map(\.partition)).count == 1)
        #expect(twins.compactMap(\.offset) == twins.compactMap(\.offset).sorted())
        await producer.close()

        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: kafka.bootstrapServers, groupID: KafkaTestSupport.uniqueName("group"),
                topics: [topic, other]),
            logger: KafkaTestSupport.logger)
        var seen: [String: KafkaConsumerMessage] = [:]
        for await message in consumer.messages {
            seen["\(message.topic)/\(message.partition)/\(message.offset)"] = message
            consumer.markProcessed(message)
            if seen.count == 303 { break }
        }
        await consumer.close()
        for (index, report) in reports.enumerated() {
            let offset = try #require(report.offset)
            let message = try #require(seen["\(report.topic)/\(report.partition)/\(offset)"], "message \(index)")
            #expect(message.value == messages[index].value, "message \(index)")
            #expect((message.key ?? []) == (messages[index].key ?? []), "message \(index)")
            #expect(message.headers == messages[index].headers, "message \(index)")
        }
    }

    @Test func aMessageRefusedInsideABatchFailsAloneAndTheRestAreDelivered() async throws {
        let topic = KafkaTestSupport.uniqueName("refused")
        try await kafka.createTopic(topic, partitions: 1)
        let producer = try KafkaTestSupport.producer(kafka)
        let tooLarge = [UInt8](repeating: 0x61, count: 2_000_000)  // over message.max.bytes
        let error = await #expect(throws: KafkaError.self) {
            try await producer.send([
                KafkaProducerMessage(topic: topic, value: [1]),
                KafkaProducerMessage(topic: topic, value: tooLarge),
                KafkaProducerMessage(topic: topic, value: [3]),
            ])
        }
        #expect(error?.code == .produce)
        #expect(error?.underlying == KafkaErrorCode.messageSizeTooLarge)
        await producer.close()
        #expect(try await KafkaTestSupport.storedCounts(topic: topic, partitions: 1, in: kafka) == [0: 2])
    }

    @Test func outOfOrderProcessingNeverCommitsPastAnUnprocessedMessage() async throws {
        let topic = try await KafkaTestSupport.topic("ordering", messages: 100, in: kafka)
        let group = KafkaTestSupport.uniqueName("group")

        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: kafka.bootstrapServers, groupID: group, topics: [topic],
                commitInterval: .seconds(3_600)),
            logger: KafkaTestSupport.logger)
        var fetched: [KafkaConsumerMessage] = []
        for await message in consumer.messages {
            fetched.append(message)
            if fetched.count == 100 { break }
        }
        #expect(fetched.map(\.offset) == Array(0..<100))
        var generator = SystemRandomNumberGenerator()
        for message in fetched.filter({ $0.offset != 10 }).shuffled(using: &generator) {
            consumer.markProcessed(message)
        }
        try await consumer.commit()
        let admin = try KafkaAdmin(bootstrapServers: kafka.bootstrapServers, logger: KafkaTestSupport.logger)
        #expect(try await admin.committedOffsets(group: group, topic: topic) == [0: 10])

        consumer.markProcessed(fetched[10])
        try await consumer.commit()
        #expect(try await admin.committedOffsets(group: group, topic: topic) == [0: 100])
        await consumer.close()
    }

    @Test func aNewConsumerResumesAfterTheCommittedOffset() async throws {
        let topic = try await KafkaTestSupport.topic("resume", messages: 20, in: kafka)
        let group = KafkaTestSupport.uniqueName("group")
        let configuration = KafkaConsumerConfiguration(
            bootstrapServers: kafka.bootstrapServers, groupID: group, topics: [topic],
            sessionTimeoutMilliseconds: 3_000)
        var firstConfiguration = configuration
        firstConfiguration.shutdownGracePeriod = .zero
        let first = try KafkaConsumer(configuration: firstConfiguration, logger: KafkaTestSupport.logger)
        var count = 0
        for await message in first.messages {
            count += 1
            // Process only the first 12; the rest are fetched but never finished.
            if message.offset < 12 { first.markProcessed(message) }
            if count == 20 { break }
        }
        await first.close()

        let second = try KafkaConsumer(configuration: configuration, logger: KafkaTestSupport.logger)
        var resumed: KafkaConsumerMessage?
        for await message in second.messages {
            resumed = message
            break
        }
        await second.close()
        #expect(resumed?.offset == 12)
    }

    @Test func closeDoesNotWaitForBufferedMessagesTheApplicationNeverTook() async throws {
        let topic = try await KafkaTestSupport.topic("close", messages: 100, in: kafka)
        let group = KafkaTestSupport.uniqueName("group")
        // Grace periods far longer than a close needs: waiting one out would show.
        let grace = Duration.seconds(30)
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: kafka.bootstrapServers, groupID: group, topics: [topic],
                shutdownGracePeriod: grace, revokeGracePeriod: grace),
            logger: KafkaTestSupport.logger)
        for await message in consumer.messages {
            consumer.markProcessed(message)
            break
        }
        // The rest of the fetch sits in the buffer, never handed to the application.
        try await KafkaTestSupport.waitUntil("the rest of the fetch is buffered", timeout: .seconds(30)) { consumer.bufferedCount > 0 }
        #expect(consumer.bufferedCount > 0)
        let start = ContinuousClock.now
        await consumer.close()
        let closedAfter = ContinuousClock.now - start
        #expect(closedAfter < grace, "close waited out a grace period for messages it never handed out")

        let admin = try KafkaAdmin(bootstrapServers: kafka.bootstrapServers, logger: KafkaTestSupport.logger)
        #expect(try await admin.committedOffsets(group: group, topic: topic) == [0: 1])
    }

    @Test func closeLeavesTheGroupBeforeItsWorkInProgressFinishes() async throws {
        let topic = try await KafkaTestSupport.topic("leave", messages: 10, in: kafka)
        let group = KafkaTestSupport.uniqueName("group")
        // Grace periods far longer than the test: waiting one out would show.
        let grace = Duration.seconds(60)
        let configuration = KafkaConsumerConfiguration(
            bootstrapServers: kafka.bootstrapServers, groupID: group, topics: [topic],
            sessionTimeoutMilliseconds: 3_000, shutdownGracePeriod: grace, revokeGracePeriod: grace)
        let first = try KafkaConsumer(configuration: configuration, logger: KafkaTestSupport.logger)
        var held: KafkaConsumerMessage?
        for await message in first.messages {
            if message.offset < 3 {
                first.markProcessed(message)
            } else {
                held = message
                break
            }
        }
        let inProgress = try #require(held)
        #expect(inProgress.offset == 3)
        let closed = Atomic<Bool>(false)
        let closing = Task {
            await first.close()
            closed.store(true, ordering: .releasing)
        }
        // The closing consumer gives its partition up at once (committing offsets 0-2), though
        // offset 3 is still in progress. The old close held it for its grace period.
        try await KafkaTestSupport.waitUntil("the closing consumer gives its partition up", timeout: .seconds(30)) {
            first.assignment.isEmpty
        }
        #expect(first.assignment.isEmpty, "the closing consumer revoked its partition before its work in progress finished")

        // The partition goes to the next consumer while the first still works on offset 3, and
        // the next one starts at it: it was not committed.
        let second = try KafkaConsumer(configuration: configuration, logger: KafkaTestSupport.logger)
        var taken: KafkaConsumerMessage?
        for await message in second.messages {
            taken = message
            break
        }
        #expect(taken?.offset == 3)
        let closedAlready = closed.load(ordering: .acquiring)
        #expect(!closedAlready, "the first consumer left before its message in progress finished")

        // The first consumer's close ends when its last message does; that acknowledgement
        // belongs to an assignment it no longer has and commits nothing.
        first.markProcessed(inProgress)
        await closing.value
        let admin = try KafkaAdmin(bootstrapServers: kafka.bootstrapServers, logger: KafkaTestSupport.logger)
        #expect(try await admin.committedOffsets(group: group, topic: topic) == [0: 3])
        if let taken { second.markProcessed(taken) }
        await second.close()
        #expect(try await admin.committedOffsets(group: group, topic: topic) == [0: 4])
    }

    /// librdkafka postpones an unsubscribe that meets a rebalance in progress and applies it
    /// later, in the middle of a close's teardown; librdkafka 2.0.2 aborted workers stopped that
    /// way (docs/faults.md, "Stopping a worker"). A close during a rebalance is librdkafka's own
    /// close alone: nothing is postponed, and the other member takes every partition.
    @Test func closeDuringARebalancePostponesNothing() async throws {
        let topic = try await KafkaTestSupport.topic("close-rebalance", partitions: 4, messages: 40, in: kafka)
        let group = KafkaTestSupport.uniqueName("group")
        let configuration = KafkaConsumerConfiguration(
            bootstrapServers: kafka.bootstrapServers, groupID: group, topics: [topic], sessionTimeoutMilliseconds: 6_000)
        let (first, capture) = try KafkaTestSupport.consumerWithGroupLog(configuration, label: "closing")
        for await message in first.messages {
            first.markProcessed(message)
            break
        }
        try await KafkaTestSupport.waitUntil("the first member owns every partition") { first.assignment.count == 4 }

        let roundStart = capture.lines.count
        let second = try KafkaConsumer(configuration: configuration, logger: KafkaTestSupport.logger)
        // librdkafka's group state, as its `cgrp` debugging reports it: the first member rejoins.
        try await KafkaTestSupport.waitUntil("the first member rejoins for the second") {
            capture.lines.dropFirst(roundStart).contains { $0.contains("-> wait-join") }
        }
        await first.close()
        // "postponing subscribe until previous rebalance completes", then "invoking waiting
        // postponed unsubscribe" during the teardown.
        let postponed = capture.lines.filter { $0.contains("postpon") && $0.contains("subscribe") }
        #expect(postponed.isEmpty, "\(postponed)")
        #expect(capture.lines.contains { $0.contains("Consumer closed") })

        // Tansu 0.6 cannot finish this round: its JoinGroup answers keep naming the departed
        // member as the leader, so the second member's SyncGroup is answered "rebalance in
        // progress" for as long as one waits (over a minute, with the old close as with this one).
        if kafka.kind == .embedded {
            try await KafkaTestSupport.waitUntil("the second member owns every partition") { second.assignment.count == 4 }
        }
        await second.close()
    }

    /// A partition moving to another member waits for its messages still in progress (up to the
    /// revoke grace period) and moves as soon as they are done: the next owner starts right after
    /// them, and nothing finished is processed twice unless the broker refused the revoke's commit.
    @Test func aRevokeWaitsForTheMessagesInProgressOfItsPartitions() async throws {
        let topic = try await KafkaTestSupport.topic("revoke", partitions: 2, messages: 40, in: kafka)
        let group = KafkaTestSupport.uniqueName("group")
        let grace = Duration.seconds(60)
        // Only the revoke commits: a periodic commit sent during the rebalance with the old
        // generation fails, and librdkafka then treats the assignment as lost.
        let configuration = KafkaConsumerConfiguration(
            bootstrapServers: kafka.bootstrapServers, groupID: group, topics: [topic], sessionTimeoutMilliseconds: 6_000,
            commitInterval: .seconds(3_600), shutdownGracePeriod: grace, revokeGracePeriod: grace)
        let (first, capture) = try KafkaTestSupport.consumerWithGroupLog(configuration, label: "revoking")
        // The first message of each partition stays in progress; the later ones are given up, so
        // nothing past the first can be committed whichever partition moves.
        var held: [Int32: KafkaConsumerMessage] = [:]
        for await message in first.messages {
            if held[message.partition] == nil {
                held[message.partition] = message
            } else {
                first.markUnfinished(message)
            }
            if held.count == 2 { break }
        }

        let roundStart = capture.lines.count
        let (second, secondCapture) = try KafkaTestSupport.consumerWithGroupLog(configuration, label: "taking")
        // The revoke is handed to the first member (librdkafka's `cgrp` debugging says so), and
        // waits there for the message in progress.
        try await KafkaTestSupport.waitUntil("the first member is asked to give a partition up") {
            capture.lines.dropFirst(roundStart).contains { $0.contains("-> wait-unassign-call") }
        }
        #expect(second.assignment.isEmpty, "nothing moved while its message was in progress")
        for message in held.values { first.markProcessed(message) }

        var taken: KafkaConsumerMessage?
        for await message in second.messages {
            taken = message
            break
        }
        let moved = try #require(taken)
        let finished = try #require(held[moved.partition])
        let round = capture.lines.dropFirst(roundStart).joined(separator: "\n")
        let joining = secondCapture.lines.joined(separator: "\n")
        // The revoke commits what the first member finished as soon as it is finished. The one
        // refusal a broker may give: a round started before the commit arrived, which librdkafka's
        // embedded cluster starts when the joining member's SyncGroup reaches it after the
        // leader's (it answers INVALID_REQUEST and the member joins again), and during which it
        // refuses commits (Kafka's coordinator accepts them from the current generation).
        let commitRefused = round.contains("commit on revoke failed")
        let joinedAgain = joining.contains("synchronization failed")
        #expect(!commitRefused || joinedAgain, "the revoke's commit was refused without another round: \(round)")
        // The next owner starts right after what the first one finished, or, when the broker
        // refused that commit, at what the first one finished (read again, never skipped).
        #expect(
            moved.offset == finished.offset + (commitRefused ? 0 : 1),
            "the next owner starts where the first one's commit says: \(round)\nthe joining member:\n\(joining)")
        second.markProcessed(moved)
        await first.close()
        await second.close()
    }

    @Test func aMessageMarkedUnfinishedIsNeitherCommittedNorWaitedFor() async throws {
        let topic = try await KafkaTestSupport.topic("unfinished", messages: 10, in: kafka)
        let group = KafkaTestSupport.uniqueName("group")
        let grace = Duration.seconds(60)
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: kafka.bootstrapServers, groupID: group, topics: [topic],
                sessionTimeoutMilliseconds: 3_000, shutdownGracePeriod: grace, revokeGracePeriod: grace),
            logger: KafkaTestSupport.logger)
        for await message in consumer.messages {
            if message.offset < 2 {
                consumer.markProcessed(message)
            } else {
                consumer.markUnfinished(message)
                break
            }
        }
        let start = ContinuousClock.now
        await consumer.close()
        #expect(ContinuousClock.now - start < grace, "close waited out its grace period for a message given up")
        let admin = try KafkaAdmin(bootstrapServers: kafka.bootstrapServers, logger: KafkaTestSupport.logger)
        #expect(try await admin.committedOffsets(group: group, topic: topic) == [0: 2])
    }

    @Test func smallBufferHoldsBackFetchingAndLosesNothing() async throws {
        let topic = try await KafkaTestSupport.topic("backpressure", partitions: 2, messages: 5_000, in: kafka)

        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: kafka.bootstrapServers, groupID: KafkaTestSupport.uniqueName("group"),
                topics: [topic], bufferCapacity: 50, properties: ["fetch.wait.max.ms": "10"]),
            logger: KafkaTestSupport.logger)
        var keys = Set<String>()
        var maximumBuffered = 0
        for await message in consumer.messages {
            maximumBuffered = max(maximumBuffered, consumer.bufferedCount)
            keys.insert(String(decoding: message.key ?? [], as: UTF8.self))
            consumer.markProcessed(message)
            if keys.count == 5_000 { break }
        }
        await consumer.close()
        #expect(keys.count == 5_000)
        #expect(maximumBuffered <= 50, "the buffer never holds more than its capacity")
    }

    @Test(.enabled(if: KafkaTestSupport.kind == .embedded, "injects produce errors into the mock brokers"))
    func idempotentProducerSurvivesRetriableBrokerErrorsWithoutDuplicates() async throws {
        // One request in flight (EmbeddedKafkaCluster.producerPropertiesForInjectedErrors): when
        // the 50 messages left in two requests on a loaded machine, the mock stored the second
        // after failing the first, and a CI run lost messages.
        let topic = KafkaTestSupport.uniqueName("retries")
        try await kafka.createTopic(topic, partitions: 1)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: kafka.bootstrapServers, lingerMilliseconds: 1,
                properties: KafkaConfigurationProperties(EmbeddedKafkaCluster.producerPropertiesForInjectedErrors)),
            logger: KafkaTestSupport.logger)
        _ = try await producer.send(KafkaTestSupport.message(topic: topic, index: -1))
        try #require(kafka.embeddedCluster).injectRequestErrors(.produce, errors: [.notLeaderOrFollower, .requestTimedOut, .notEnoughReplicas])
        let reports = try await producer.send((0..<50).map { KafkaTestSupport.message(topic: topic, index: $0) })
        #expect(reports.count == 50)
        await producer.close()

        let admin = try KafkaAdmin(bootstrapServers: kafka.bootstrapServers, logger: KafkaTestSupport.logger)
        let watermarks = try await admin.highWatermarks(topic: topic)
        #expect(watermarks == [0: 51], "each message stored once: \(watermarks)")
    }

    @Test func sendersAtAFullWindowWaitInsteadOfOverflowingLibrdkafkasQueue() async throws {
        // The window equals librdkafka's queue bound (queue.buffering.max.messages), and many
        // senders keep it full: a permit handed back before librdkafka frees the message's
        // slot would let a sender enqueue into a full queue (Local: Queue full).
        let topic = KafkaTestSupport.uniqueName("window")
        try await kafka.createTopic(topic, partitions: 4)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: kafka.bootstrapServers, lingerMilliseconds: 0, maxInFlightMessages: 20),
            logger: KafkaTestSupport.logger)
        let sent = try await withThrowingTaskGroup(of: Int.self) { group in
            for sender in 0..<50 {
                group.addTask {
                    var count = 0
                    for call in 0..<40 {
                        let first = (sender * 40 + call) * 5
                        count += try await producer.send((first..<first + 5).map { KafkaTestSupport.message(topic: topic, index: $0) }).count
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(sent == 10_000)
        await producer.close()
        #expect(try await KafkaTestSupport.storedCounts(topic: topic, partitions: 4, in: kafka).values.reduce(0, +) == 10_000)
    }

    @Test(.timeLimit(.minutes(1)))
    func sendsRacingCloseAreEitherConfirmedOrRefusedAsClosed() async throws {
        // Messages enqueued before the producer closed are flushed; a send after it is refused.
        // No send may wait forever, and the topic must hold exactly the messages whose sends
        // returned.
        let topic = KafkaTestSupport.uniqueName("closing")
        try await kafka.createTopic(topic, partitions: 4)
        let producer = try KafkaTestSupport.producer(kafka)
        let (confirmed, refused) = try await withThrowingTaskGroup(of: (confirmed: Int, refused: Int).self) { group in
            for sender in 0..<20 {
                group.addTask {
                    // Sends until refused, so sends are being posted when the producer closes.
                    var confirmed = 0
                    for call in 0... {
                        let first = (sender * 1_000 + call) * 20
                        do {
                            confirmed += try await producer.send((first..<first + 20).map { KafkaTestSupport.message(topic: topic, index: $0) }).count
                        } catch let error as KafkaError where error.code == .closed {
                            return (confirmed, 1)
                        }
                    }
                    return (confirmed, 0)
                }
            }
            group.addTask {
                let first = try await producer.send(KafkaTestSupport.message(topic: topic, index: 10_000_000))
                await producer.close()
                return (first.offset == nil ? 0 : 1, 0)
            }
            return try await group.reduce((0, 0)) { ($0.0 + $1.confirmed, $0.1 + $1.refused) }
        }
        #expect(refused == 20)
        #expect(try await KafkaTestSupport.storedCounts(topic: topic, partitions: 4, in: kafka).values.reduce(0, +) == Int64(confirmed))
    }

    @Test func aSendAfterCloseIsRefusedAsClosed() async throws {
        let topic = KafkaTestSupport.uniqueName("closed")
        try await kafka.createTopic(topic, partitions: 1)
        let producer = try KafkaTestSupport.producer(kafka)
        await producer.close()
        let error = await #expect(throws: KafkaError.self) {
            try await producer.send((0..<3).map { KafkaTestSupport.message(topic: topic, index: $0) })
        }
        #expect(error?.code == .closed)
    }

    @Test(.enabled(if: KafkaTestSupport.kind == .embedded, "injects produce errors into the mock brokers"))
    func nonRetriableDeliveryErrorIsThrownWithTheBrokerCode() async throws {
        let topic = KafkaTestSupport.uniqueName("denied")
        try await kafka.createTopic(topic, partitions: 1)
        let producer = try KafkaTestSupport.producer(kafka)
        _ = try await producer.send(KafkaTestSupport.message(topic: topic, index: 0))
        try #require(kafka.embeddedCluster).injectRequestErrors(.produce, errors: [.topicAuthorizationFailed])
        let error = await #expect(throws: KafkaError.self) {
            try await producer.send(KafkaTestSupport.message(topic: topic, index: 1))
        }
        #expect(error?.code == .delivery)
        #expect(error?.underlying == .topicAuthorizationFailed)
        await producer.close()
    }

    @Test(.enabled(if: KafkaTestSupport.kind == .embedded, "drops connections in the mock brokers"))
    func producerDeliversOnceTheBrokersStopDroppingItsConnections() async throws {
        // Each of the next produce requests, at any broker, has its connection closed before it
        // is answered, as when brokers go away and come back: the messages are retried on new
        // connections and each is stored once. (librdkafka 2.0.2's mock broker down/up re-binds
        // the listener and aborts the process when that bind fails, so the outage is made with
        // dropped connections; EmbeddedKafkaCluster.setBrokerDown says more.)
        //
        // One request in flight per connection: the 2.0.2 mock appends a produce request without
        // checking the idempotent producer's sequence numbers, and a dropped connection loses the
        // answers of the requests pipelined before the dropped one, which were appended. Their
        // retries were stored again (a CI run on a loaded machine stored 39 of 31). A real broker
        // discards such retries by their sequence; the mock cannot, so the test keeps the
        // window to one request, which makes "stored once" a property of the retry path alone.
        let topic = KafkaTestSupport.uniqueName("outage")
        try await kafka.createTopic(topic, partitions: 3)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: kafka.bootstrapServers, lingerMilliseconds: 1,
                properties: KafkaConfigurationProperties(EmbeddedKafkaCluster.producerPropertiesForInjectedErrors)),
            logger: KafkaTestSupport.logger)
        _ = try await producer.send(KafkaTestSupport.message(topic: topic, index: 0))
        try #require(kafka.embeddedCluster).injectRequestErrors(.produce, errors: Array(repeating: .transport, count: 6))
        let reports = try await producer.send((1...30).map { KafkaTestSupport.message(topic: topic, index: $0) })
        #expect(reports.count == 30)
        await producer.close()

        let admin = try KafkaAdmin(bootstrapServers: kafka.bootstrapServers, logger: KafkaTestSupport.logger)
        let stored = try await admin.highWatermarks(topic: topic).values.reduce(0, +)
        #expect(stored == 31, "each message stored once")
    }

    @Test func adminDescribesTopicsAndWatermarks() async throws {
        let topic = KafkaTestSupport.uniqueName("described")
        // Tansu is one broker: one replica, its own node id the leader of every partition.
        let replicas: Int32 = kafka.kind == .embedded ? 3 : 1
        try await kafka.createTopic(topic, partitions: 6, replicationFactor: replicas)
        let admin = try KafkaAdmin(bootstrapServers: kafka.bootstrapServers, logger: KafkaTestSupport.logger)
        let description = try await admin.describeTopic(topic)
        #expect(description.partitions.map(\.id) == Array(0..<6))
        #expect(description.partitions.allSatisfy { $0.replicas.count == Int(replicas) })
        #expect(description.partitions.allSatisfy { $0.replicas.contains($0.leader) })
        if kafka.kind == .embedded {
            #expect(Set(description.partitions.map(\.leader)).isSubset(of: [1, 2, 3]))
        }

        let producer = try KafkaTestSupport.producer(kafka)
        _ = try await producer.send(KafkaProducerMessage(topic: topic, value: [1], partition: 4))
        await producer.close()
        let watermarks = try await admin.highWatermarks(topic: topic)
        #expect(watermarks == [0: 0, 1: 0, 2: 0, 3: 0, 4: 1, 5: 0])
    }

    @Test(.enabled(if: KafkaTestSupport.kind == .tansu, "the mock brokers have no controller"))
    func createTopicsMakesTopicsWithTheirPartitionsAndAcceptsExistingOnes() async throws {
        let admin = try KafkaAdmin(bootstrapServers: kafka.bootstrapServers, logger: KafkaTestSupport.logger)
        let topics = [KafkaTestSupport.uniqueName("created"), KafkaTestSupport.uniqueName("created")]
        try await admin.createTopics(topics.enumerated().map { KafkaTopicSpecification(name: $1, partitions: Int32(2 + $0)) })
        try await admin.createTopics([KafkaTopicSpecification(name: topics[0], partitions: 2)])
        #expect(try await admin.describeTopic(topics[0]).partitions.count == 2)
        #expect(try await admin.describeTopic(topics[1]).partitions.count == 3)
    }

    @Test(.enabled(if: KafkaTestSupport.kind == .embedded, "the mock brokers have no controller"))
    func createTopicsFailsWithARetryableErrorWhenNoControllerAnswers() async throws {
        // The mock brokers have no controller for CreateTopics, as a cluster mid-election would not:
        // the call must give up within its timeout with an error worth retrying, not hang.
        let admin = try KafkaAdmin(bootstrapServers: kafka.bootstrapServers, logger: KafkaTestSupport.logger)
        let started = ContinuousClock.now
        let error = await #expect(throws: KafkaError.self) {
            try await admin.createTopics(
                [KafkaTopicSpecification(name: KafkaTestSupport.uniqueName("created"), partitions: 5)],
                timeout: .seconds(2))
        }
        #expect(error?.isRetryable == true)
        // A hang guard, not a speed test: the call ends about 3 s in (2 s, then 1 s of polling
        // for the result); on a loaded 2-core machine running every suite at once it once took
        // 10.7 s to come back.
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test(.enabled(if: KafkaTestSupport.kind == .embedded, "the mock brokers' retention"))
    func embeddedClusterKeepsOnlyTheNewestFewMegabytesOfAPartition() async throws {
        // librdkafka's mock brokers cap each partition's log (about 5 MB) and drop the oldest
        // data. Pipelines on the embedded cluster must consume as they go; this pins it down.
        let topic = KafkaTestSupport.uniqueName("retention")
        try await kafka.createTopic(topic, partitions: 1)
        let producer = try KafkaTestSupport.producer(kafka, lingerMilliseconds: 5)
        let value = Array(repeating: UInt8(ascii: "r"), count: 1_000)
        for _ in 0..<4 {
            _ = try await producer.send((0..<5_000).map { _ in KafkaProducerMessage(topic: topic, value: value) })
        }
        await producer.close()
        let admin = try KafkaAdmin(bootstrapServers: kafka.bootstrapServers, logger: KafkaTestSupport.logger)
        let partition = try #require(try await admin.watermarks(topic: topic)[0])
        #expect(partition.high == 20_000)
        #expect(partition.low > 0, "the oldest of 20 MB were dropped")
        let keptBytes = (partition.high - partition.low) * 1_000
        #expect(keptBytes >= 1_000_000 && keptBytes <= 10_000_000, "kept \(keptBytes) bytes")
    }

    @Test func unknownPropertyIsRejectedNamingTheKey() throws {
        let error = #expect(throws: KafkaError.self) {
            _ = try KafkaProducer(
                configuration: KafkaProducerConfiguration(
                    bootstrapServers: kafka.bootstrapServers, properties: ["no.such.property": "1"]),
                logger: KafkaTestSupport.logger)
        }
        #expect(error?.code == .configuration)
        #expect(error?.message.contains("no.such.property") == true)
    }
}
