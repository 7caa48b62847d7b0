import APNsSimulator
import EmbeddedKafka
import EmbeddedStack
import Foundation
import Logging
import PushConfiguration
import PushJobs
import Redis
import Testing

/// The stack the demo, the end-to-end tests and the benchmarks run on.
@Suite("Embedded stack", .serialized)
struct EmbeddedStackTests {
    @Test(
        "its configuration file describes what it started: topics as kafka.topics says, Redis answering, the simulator idle; stop removes its directory"
    )
    func configurationDescribesTheStack() async throws {
        var logger = Logger(label: "pushfleet.test.embedded-stack")
        logger.logLevel = .error
        var options = EmbeddedStack.Options()
        options.kafkaProperties = EmbeddedKafkaCluster.producerPropertiesForInjectedErrors
        let stack = try await EmbeddedStack.start(options, logger: logger)
        let loaded = try PushFleetConfiguration.load(path: stack.configurationPath)
        #expect(loaded == stack.configuration)
        #expect(loaded.apps.keys.contains(EmbeddedStack.app))
        #expect(loaded.kafka.properties == ["fetch.wait.max.ms": "10", "max.in.flight.requests.per.connection": "1"])

        let admin = try loaded.kafka.makeAdmin(logger: logger)
        let findings = try await loaded.kafka.auditTopics(admin: admin, layout: loaded.kafka.topics)
        #expect(findings.count == 5)  // the five topics of the pipeline
        #expect(findings.allSatisfy { !$0.isShortfall }, "\(findings.map(\.description))")

        let redis = stack.makeRedisClient(logger: logger)
        #expect(try await redis.send("PING") == .status("PONG"))
        await redis.shutdown()
        #expect(try await stack.simulator.counters().requests == 0)

        await stack.stop()
        #expect(!FileManager.default.fileExists(atPath: stack.directory.path))
    }
}
