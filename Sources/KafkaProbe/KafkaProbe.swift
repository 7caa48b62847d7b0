import ArgumentParser
import Dispatch
import Foundation
import Kafka
import Logging

/// A group-consumer process for the multi-process Kafka tests and benchmarks.
///
/// It appends one line per processed message (`partition offset key`) to `--output` with a
/// plain `write(2)` before marking the message processed, so a line survives even a SIGKILL, and
/// one line per rebalance to `--events`. SIGTERM closes the consumer gracefully (commit, leave
/// the group) and exits 0.
@main
struct KafkaProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kafka-probe",
        abstract: "Consume a topic in a group, recording each processed message.")

    @Option(help: "Bootstrap servers.") var bootstrap: String
    @Option(help: "Topic to consume.") var topic: String
    @Option(help: "Consumer group id.") var group: String
    @Option(help: "File that receives a line per processed message.") var output: String
    @Option(help: "File that receives a line per rebalance event.") var events: String?
    @Option(help: "session.timeout.ms") var sessionTimeoutMs = 6_000
    @Option(help: "Exit after this many messages (0: run until SIGTERM).") var count = 0
    @Option(help: "Work time per message in microseconds, to stand in for real processing.")
    var workMicroseconds = 0

    func run() async throws {
        var logger = Logger(label: "kafka-probe")
        logger.logLevel = .notice
        let outputHandle = try FileAppender(path: output)
        let eventHandle = try events.map { try FileAppender(path: $0) }
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: bootstrap, groupID: group, topics: [topic],
                sessionTimeoutMilliseconds: sessionTimeoutMs,
                commitInterval: .milliseconds(200),
                properties: ["heartbeat.interval.ms": "500"]),
            logger: logger,
            onRebalance: { event in
                switch event {
                case .assigned(let partitions):
                    eventHandle?.append("assigned \(partitions.map { String($0.partition) }.joined(separator: ","))\n")
                case .revoked(let partitions):
                    eventHandle?.append("revoked \(partitions.map { String($0.partition) }.joined(separator: ","))\n")
                }
            })

        signal(SIGTERM, SIG_IGN)
        let termination = DispatchSource.makeSignalSource(signal: SIGTERM)
        termination.setEventHandler { Task { await consumer.close() } }
        termination.resume()

        var processed = 0
        for await message in consumer.messages {
            let key = message.key.map { String(decoding: $0, as: UTF8.self) } ?? "-"
            if workMicroseconds > 0 { try await Task.sleep(for: .microseconds(workMicroseconds)) }
            outputHandle.append("\(message.partition) \(message.offset) \(key)\n")
            consumer.markProcessed(message)
            processed += 1
            if count > 0, processed >= count { break }
        }
        await consumer.close()
        termination.cancel()
    }
}

/// Appends text with one `write(2)` per call: no user-space buffer to lose on SIGKILL.
final class FileAppender: Sendable {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard descriptor >= 0 else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
    }

    func append(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            _ = write(descriptor, bytes.baseAddress, bytes.count)
        }
    }

    deinit {
        close(descriptor)
    }
}
