import Foundation
import Redis
import Spawn

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real `redis-server` process on a free loopback port, in a fresh temporary directory, for
/// tests, benchmarks and `pushfleet demo`. It persists nothing (`--save ''`, `--appendonly no`).
/// A benchmark that runs it on a test host of its own passes that host's address and the command
/// that puts a process there (`ip netns exec <host>`).
///
/// ```swift
/// let server = try await LocalRedisServer.start()
/// let client = RedisClient(configuration: server.configuration)
/// …
/// await server.stop()
/// ```
///
/// ``stop()`` ends the process and removes the directory; if the server is dropped without
/// ``stop()``, `deinit` kills the process (SIGKILL) and removes the directory.
public actor LocalRedisServer {
    /// The address the server listens on: `127.0.0.1` unless started on another host.
    public nonisolated let host: String
    /// The port the server listens on (the same across ``restart()``).
    public nonisolated let port: Int
    /// The password of the `default` user (`--requirepass`), if any.
    public nonisolated let password: String?
    /// The temporary working directory (holds `redis.log`).
    public nonisolated let directory: URL
    private let executable: URL
    /// The command the server runs under (e.g. `ip netns exec <host>`); empty: run directly.
    private let launcher: [String]
    private let extraArguments: [String]
    private var process: ChildProcess?

    /// The running redis-server's process id; `nil` once stopped.
    public var processIdentifier: Int32? {
        guard let process, process.isRunning else { return nil }
        return process.processIdentifier
    }

    /// How long ``start(redisServerPath:extraArguments:password:)`` and ``restart()`` wait for PING.
    private static let readinessBudget: Duration = .seconds(10)

    /// A configuration that reaches this server (password included), to adjust as needed.
    public nonisolated var configuration: RedisConfiguration {
        RedisConfiguration(host: host, port: port, password: password)
    }

    private init(executable: URL, launcher: [String], host: String, port: Int, directory: URL, password: String?, extraArguments: [String]) {
        self.executable = executable
        self.launcher = launcher
        self.host = host
        self.port = port
        self.directory = directory
        self.password = password
        self.extraArguments = extraArguments
    }

    deinit {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts `redis-server` on a free port and returns once it answers (`INFO server` naming its process).
    ///
    /// - Parameters:
    ///   - redisServerPath: the executable; a bare name is looked up in `PATH`.
    ///   - extraArguments: more `redis-server` options, e.g. `["--maxmemory", "64mb"]`.
    ///   - password: set as `--requirepass`.
    ///   - host: the address to listen on.
    ///   - launcher: a command the server runs under, its executable looked up in `PATH`
    ///     (`["ip", "netns", "exec", "<namespace>"]` puts it on a test host of its own).
    /// - Throws: ``RedisClientError`` (`connectionFailed`) with the server's log when it does not
    ///   come up; a start that lost a race for its port is retried on another port.
    public static func start(
        redisServerPath: String = "redis-server",
        extraArguments: [String] = [],
        password: String? = nil,
        host: String = "127.0.0.1",
        launcher: [String] = []
    ) async throws -> LocalRedisServer {
        let executable = try locate(redisServerPath)
        var lastError: (any Error)?
        for _ in 1...5 {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("pushfleet-redis-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let server = LocalRedisServer(
                executable: executable,
                launcher: launcher,
                host: host,
                port: try freePort(),
                directory: directory,
                password: password,
                extraArguments: extraArguments
            )
            do {
                try await server.launch()
                return server
            } catch {
                lastError = error
                await server.stop()
            }
        }
        throw lastError!
    }

    /// Stops the server (SIGKILL; it persists nothing) and removes its directory.
    public func stop() async {
        await terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the server and starts it again on the same port (with an empty dataset, unless
    /// `extraArguments` turned on persistence: then it reloads it), returning once it answers
    /// `PING`. Clients see their connections closed.
    public func restart() async throws {
        await terminate()
        try await launch()
    }

    private func launch() async throws {
        var arguments = [
            "--port", "\(port)",
            "--bind", host,
            "--dir", directory.path,
            "--logfile", "redis.log",
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
        ]
        if let password {
            arguments += ["--requirepass", password]
        }
        let process: ChildProcess
        do {
            if let command = launcher.first {
                process = try ChildProcess(
                    executable: try Self.locate(command).path,
                    arguments: Array(launcher.dropFirst()) + [executable.path] + arguments + extraArguments, directory: directory.path)
            } else {
                process = try ChildProcess(executable: executable.path, arguments: arguments + extraArguments, directory: directory.path)
            }
        } catch {
            throw RedisClientError(.connectionFailed, message: "could not run \(executable.path)", underlying: error, isRetryable: false)
        }
        self.process = process
        try await waitUntilAnswering()
    }

    /// Polls `INFO server` with backoff until this process answers, it exits, or the budget is
    /// spent. The answer must name this process: a port another test's server took between
    /// ``freePort()`` and the bind answers too, while this server exits (and ``start`` tries
    /// another port).
    private func waitUntilAnswering() async throws {
        var probe = configuration
        probe.connectTimeout = .seconds(1)
        probe.commandTimeout = .seconds(1)
        probe.reconnect = .init(maxAttempts: 1)
        let clock = ContinuousClock()
        let deadline = clock.now + Self.readinessBudget
        var delay: Duration = .milliseconds(5)
        var lastError: (any Error)?
        while clock.now < deadline, process?.isRunning == true {
            do {
                let connection = try await RedisConnection.connect(configuration: probe)
                let reply = try await connection.send("INFO", "server")
                await connection.close()
                if let pid = process?.processIdentifier, reply.string?.contains("process_id:\(pid)\r\n") == true {
                    return
                }
            } catch {
                lastError = error
            }
            try await Task.sleep(for: delay)
            delay = min(delay * 2, .milliseconds(200))
        }
        let state = process?.isRunning == true ? "did not answer INFO within \(Self.readinessBudget)" : "exited"
        throw RedisClientError(
            .connectionFailed,
            message: "local redis-server on \(host):\(port) \(state); log: \(logTail())",
            underlying: lastError,
            isRetryable: false
        )
    }

    /// Stops the server answering, keeping its data (SIGSTOP): an outage for tests. Connections
    /// stay open and commands wait until ``resume()``.
    public func pause() {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGSTOP)
        }
    }

    /// Lets a paused server answer again (SIGCONT).
    public func resume() {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGCONT)
        }
    }

    /// Kills the process and waits for it to exit: SIGKILL, as the server persists nothing.
    private func terminate() async {
        guard let process else { return }
        self.process = nil
        process.signal(SIGKILL)
        _ = await process.exited()
    }

    private func logTail() -> String {
        let log = directory.appendingPathComponent("redis.log")
        guard let text = try? String(contentsOf: log, encoding: .utf8) else { return "(no log)" }
        return text.split(separator: "\n").suffix(5).joined(separator: " | ")
    }

    static func locate(_ path: String) throws -> URL {
        if path.contains("/") {
            return URL(fileURLWithPath: path)
        }
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in searchPath.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(path)
            if FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
        }
        throw RedisClientError(.connectionFailed, message: "\(path) not found in PATH (\(searchPath))", isRetryable: false)
    }

    /// A port the kernel just handed out for 127.0.0.1 (bind to port 0, read it, close).
    public static func freePort() throws -> Int {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else {
            throw RedisClientError(.connectionFailed, message: "socket(): errno \(errno)", isRetryable: false)
        }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else {
            throw RedisClientError(.connectionFailed, message: "could not bind a free port: errno \(errno)", isRetryable: false)
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

extension LocalRedisServer {
    /// Runs `body` against a fresh server and stops the server afterwards, also when `body`
    /// throws.
    public static func with<Value>(
        password: String? = nil,
        extraArguments: [String] = [],
        _ body: (LocalRedisServer) async throws -> Value
    ) async throws -> Value {
        let server = try await LocalRedisServer.start(extraArguments: extraArguments, password: password)
        do {
            let value = try await body(server)
            await server.stop()
            return value
        } catch {
            await server.stop()
            throw error
        }
    }
}
