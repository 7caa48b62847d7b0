import EmbeddedKafka
import Foundation
import Kafka
import Spawn
import Testing

/// A consumer group spread over separate `kafka-probe` processes, joined to an embedded cluster
/// in this process over loopback TCP, or to a Tansu broker (``KafkaTestSupport/kind``).
@Suite(.serialized) struct KafkaGroupProcessTests {
    static let messageCount = 10_000
    static let partitions: Int32 = 6

    @Test func twoProcessesConsumeEveryMessageExactlyOnce() async throws {
        let fixture = try await GroupFixture()
        let first = try fixture.startProbe("a")
        let second = try fixture.startProbe("b")
        defer {
            first.terminate()
            second.terminate()
        }
        try await fixture.waitUntilBalanced([first, second])

        let end = try await fixture.produceAll()
        try await fixture.waitUntilCommittedToTheEnd(end)
        for probe in [first, second] { try await probe.stop() }

        let records = try fixture.processedRecords([first, second])
        #expect(records.count == Self.messageCount, "every message processed once, none twice")
        #expect(Set(records.map(\.key)).count == Self.messageCount)
        #expect(Set(records.map(\.position)).count == Self.messageCount)
        #expect(try first.records().count > 0 && second.records().count > 0, "both processes took part")
    }

    @Test func aJoiningMemberTakesOnlyThePartitionsThatMoveWhileTheOthersKeepTheirs() async throws {
        let fixture = try await GroupFixture()
        let first = try fixture.startProbe("first")
        defer { first.terminate() }
        try await fixture.waitUntilBalanced([first])
        let second = try fixture.startProbe("second")
        defer { second.terminate() }
        try await fixture.waitUntilBalanced([first, second])

        // Cooperative-sticky: the first member gave up only what the second took; an eager
        // rebalance would have revoked all six and assigned three back.
        let revoked = try first.rebalanceEvents().filter { !$0.assigned }.flatMap(\.partitions)
        let kept = try first.currentAssignment()
        #expect(!revoked.isEmpty && revoked.count < Int(Self.partitions), "revoked: \(revoked)")
        #expect(Set(revoked) == Set(try second.currentAssignment()), "what moved is what the newcomer owns")
        #expect(Set(revoked).isDisjoint(with: kept))

        let end = try await fixture.produceAll()
        try await fixture.waitUntilCommittedToTheEnd(end)
        for probe in [first, second] { try await probe.stop() }
        let records = try fixture.processedRecords([first, second])
        #expect(records.count == Self.messageCount, "every message processed once, none twice")
    }

    @Test func survivorTakesOverFromAKilledProcessAndEverythingIsCommitted() async throws {
        let fixture = try await GroupFixture()
        // The victim works slowly enough to be killed mid-stream after some of its commits landed.
        let victim = try fixture.startProbe("victim", workMicroseconds: 1_000)
        let survivor = try fixture.startProbe("survivor")
        defer {
            victim.terminate()
            survivor.terminate()
        }
        try await fixture.waitUntilBalanced([victim, survivor])

        let end = try await fixture.produceAll()
        let victimPartitions = try victim.currentAssignment()
        try await fixture.waitUntil("the victim processed and committed some messages", timeout: .seconds(120)) {
            let committed = try await fixture.admin.committedOffsets(group: fixture.group, topic: fixture.topic)
            return try victim.records().count >= 500 && victimPartitions.contains { committed[$0] != nil }
        }
        victim.kill()
        let killedAfter = try victim.records().count
        #expect(killedAfter < Self.messageCount, "killed mid-stream")

        try await fixture.waitUntilCommittedToTheEnd(end)
        try await survivor.stop()

        let records = try fixture.processedRecords([victim, survivor])
        let keys = Set(records.map(\.key))
        #expect(keys.count == Self.messageCount, "no message lost")
        let duplicates = records.count - Set(records.map(\.position)).count
        // At least once: only what the victim processed after its last commit is seen twice.
        print("kafka group takeover: victim processed \(killedAfter) before SIGKILL; \(duplicates) messages processed twice")
        #expect(duplicates < killedAfter, "what the victim committed is not processed again")
    }
}

/// One topic, one group, and the probes consuming it.
private struct GroupFixture {
    let kafka: LocalKafka
    let admin: KafkaAdmin
    let topic = KafkaTestSupport.uniqueName("group-topic")
    let group = KafkaTestSupport.uniqueName("group")
    let directory: URL

    init() async throws {
        kafka = try await KafkaTestSupport.start(brokers: 2)
        try await kafka.createTopic(topic, partitions: KafkaGroupProcessTests.partitions)
        admin = try KafkaAdmin(bootstrapServers: kafka.bootstrapServers, logger: KafkaTestSupport.logger)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(KafkaTestSupport.uniqueName("probes"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func startProbe(_ name: String, workMicroseconds: Int = 0) throws -> Probe {
        let output = directory.appendingPathComponent("\(name).out")
        let events = directory.appendingPathComponent("\(name).events")
        let logFile = directory.appendingPathComponent("\(name).log")
        let arguments = [
            "--bootstrap", kafka.bootstrapServers, "--topic", topic, "--group", group,
            "--output", output.path, "--events", events.path, "--session-timeout-ms", "3000",
            "--work-microseconds", String(workMicroseconds),
        ]
        // Not the test process's standard output: a probe holding that pipe would keep `swift
        // test` waiting after a crashed test process.
        guard FileManager.default.createFile(atPath: logFile.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let log = try FileHandle(forWritingTo: logFile)
        defer { try? log.close() }
        let process = try ChildProcess(
            executable: KafkaTestSupport.productsDirectory.appendingPathComponent("kafka-probe").path, arguments: arguments,
            output: .descriptor(log.fileDescriptor))
        return Probe(process: process, output: output, events: events, log: logFile)
    }

    /// Produces every message and returns the end of each partition (its last offset + 1), from
    /// the delivery reports.
    func produceAll() async throws -> [Int32: Int64] {
        let producer = try KafkaTestSupport.producer(kafka, lingerMilliseconds: 5)
        let messages = (0..<KafkaGroupProcessTests.messageCount).map { KafkaTestSupport.message(topic: topic, index: $0) }
        let reports = try await producer.send(messages)
        await producer.close()
        var end: [Int32: Int64] = [:]
        for report in reports {
            let offset = try #require(report.offset, "the broker told each message's offset")
            end[report.partition] = max(end[report.partition] ?? 0, offset + 1)
        }
        return end
    }

    /// Waits until each probe's latest rebalance event is an assignment, and together they own
    /// every partition exactly once.
    func waitUntilBalanced(_ probes: [Probe]) async throws {
        try await waitUntil("the group is balanced", timeout: .seconds(60)) {
            let owned = try probes.map { try $0.currentAssignment() }
            guard owned.allSatisfy({ !$0.isEmpty }) else { return false }
            let all = owned.flatMap { $0 }
            return all.count == Int(KafkaGroupProcessTests.partitions)
                && Set(all) == Set(0..<KafkaGroupProcessTests.partitions)
        }
    }

    func waitUntilCommittedToTheEnd(_ end: [Int32: Int64]) async throws {
        #expect(end.values.reduce(0, +) == Int64(KafkaGroupProcessTests.messageCount))
        try await waitUntil("the group committed every offset", timeout: .seconds(180)) {
            try await admin.committedOffsets(group: group, topic: topic) == end
        }
    }

    func processedRecords(_ probes: [Probe]) throws -> [Probe.Record] {
        try probes.flatMap { try $0.records() }
    }

    func waitUntil(
        _ what: String, timeout: Duration, _ condition: () async throws -> Bool
    ) async throws {
        try await KafkaTestSupport.waitUntil(what, timeout: timeout, every: .milliseconds(100), condition)
    }
}

/// A `kafka-probe` process and the files it writes.
private final class Probe: Sendable {
    struct Record: Hashable {
        let partition: Int32
        let offset: Int64
        let key: String
        var position: String { "\(partition):\(offset)" }
    }

    let process: ChildProcess
    let output: URL
    let events: URL
    /// The probe's standard output and error.
    let log: URL

    init(process: ChildProcess, output: URL, events: URL, log: URL) {
        self.process = process
        self.output = output
        self.events = events
        self.log = log
    }

    func records() throws -> [Record] {
        guard FileManager.default.fileExists(atPath: output.path) else { return [] }
        return try String(contentsOf: output, encoding: .utf8).split(separator: "\n").map { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let partition = Int32(fields[0]), let offset = Int64(fields[1]) else {
                throw ProbeError.malformedLine(String(line))
            }
            return Record(partition: partition, offset: offset, key: String(fields[2]))
        }
    }

    /// The probe's rebalance events in order: (assigned?, partitions).
    func rebalanceEvents() throws -> [(assigned: Bool, partitions: [Int32])] {
        guard FileManager.default.fileExists(atPath: events.path) else { return [] }
        return try String(contentsOf: events, encoding: .utf8).split(separator: "\n").map { line in
            // An incremental rebalance may hand a member an empty list: "assigned ".
            let fields = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            guard fields.count == 2, fields[0] == "assigned" || fields[0] == "revoked" else { throw ProbeError.malformedLine(String(line)) }
            return (fields[0] == "assigned", fields[1].split(separator: ",").compactMap { Int32($0) })
        }
    }

    /// The partitions the probe owns now: its events replayed (an eager rebalance revokes and
    /// assigns everything, a cooperative one only what moves).
    func currentAssignment() throws -> [Int32] {
        var owned = Set<Int32>()
        for event in try rebalanceEvents() {
            if event.assigned { owned.formUnion(event.partitions) } else { owned.subtract(event.partitions) }
        }
        return owned.sorted()
    }

    func kill() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then expects a clean exit.
    func stop() async throws {
        process.terminate()
        let ended = await process.exited()
        #expect(ended == .exited(0), "probe exits 0 on SIGTERM (\(ended)); it logged: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }

    func terminate() {
        process.signal(SIGKILL)
    }

    enum ProbeError: Error {
        case malformedLine(String)
    }
}
