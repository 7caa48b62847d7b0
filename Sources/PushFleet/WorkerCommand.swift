import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import PushAPI
import PushConfiguration
import PushJobs
import PushLogging
import PushPipeline
import ServiceLifecycle

/// `pushfleet worker`: a pipeline worker (expand and send stages by default). Stateless; run as
/// many as the topics' partitions allow. SIGTERM or SIGINT stop it gracefully.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run a pipeline worker: expand jobs, send notifications, drain the resend buffer.")

    @OptionGroup var options: ProcessOptions

    @Option(name: .customLong("role"), help: "A role to take: expand, send or feedback (repeatable; default expand and send).")
    var roles: [String] = []

    func run() async throws {
        var chosen = Set<WorkerRole>()
        for name in roles {
            guard let role = WorkerRole(rawValue: name) else {
                throw ValidationError("unknown role '\(name)'; roles are \(WorkerRole.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            chosen.insert(role)
        }
        try await options.runWorker(roles: chosen.isEmpty ? [.expand, .send] : chosen, label: "pushfleet.worker")
    }
}

/// `pushfleet feedback`: the feedback worker, removing invalid tokens from the registry.
struct FeedbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedback",
        abstract: "Run the feedback worker: remove the tokens APNs reported invalid from the registry.")

    @OptionGroup var options: ProcessOptions

    func run() async throws {
        try await options.runWorker(roles: [.feedback], label: "pushfleet.feedback")
    }
}

/// Options every long-running process takes.
struct ProcessOptions: ParsableArguments {
    @Option(help: "The configuration file (YAML). Environment variables PUSHFLEET__<KEY>__<KEY> override it.")
    var config: String = "pushfleet.yaml"

    @Option(help: "Log level (trace, debug, info, notice, warning, error, critical).")
    var logLevel: String = "info"

    @Option(help: "Log format on standard error: text, or json (one object per line, for log pipelines).")
    var logFormat: String = "text"

    func loadConfiguration() throws -> PushFleetConfiguration {
        do {
            return try PushFleetConfiguration.load(path: config)
        } catch {
            throw ValidationError("configuration \(config): \(error)")
        }
    }

    func runWorker(roles: Set<WorkerRole>, label: String) async throws {
        try await runService(label: label) { configuration, logger, registry in
            let worker = try PushWorker(configuration: configuration, roles: roles, logger: logger)
            var services: [any Service] = [worker]
            if let port = configuration.metrics.port {
                let lagGroups = roles.sorted { $0.rawValue < $1.rawValue }.map { ($0.group(prefix: configuration.kafka.groupPrefix), $0.topic) }
                services.append(
                    OperationsServer(
                        configuration: configuration, registry: registry, port: port, lagGroups: lagGroups,
                        certificates: worker.certificateExpiries, logger: logger))
            }
            return (services, { worker.unfinishedWork })
        }
    }

    /// Runs long-lived services with logs on stderr at `--log-level` and swift-metrics going to
    /// a Prometheus registry, until SIGTERM or SIGINT shuts them down gracefully: within
    /// `worker.shutdown-deadline-seconds`, after which their work is cancelled and the process
    /// exits 75 (``ProcessStop``), logging the work it leaves unfinished.
    func runService(
        label: String, _ makeServices: (PushFleetConfiguration, Logger, PrometheusCollectorRegistry) throws -> [any Service]
    ) async throws {
        try await runService(label: label) { configuration, logger, registry in
            (try makeServices(configuration, logger, registry), { [:] })
        }
    }

    /// ``runService(label:_:)`` for services that can say what they leave unfinished.
    func runService(
        label: String,
        _ makeServices: (PushFleetConfiguration, Logger, PrometheusCollectorRegistry) throws -> ([any Service], @Sendable () -> Logger.Metadata)
    ) async throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        guard let format = LogFormat(rawValue: logFormat) else {
            throw ValidationError("unknown log format '\(logFormat)'; formats are \(LogFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        LoggingSystem.bootstrap { label in format.handler(label: label, level: level) }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        // The conventional series of a process's start: a restart shows as a change of its value
        // (the restart alert of deploy/prometheus/alerts.yaml).
        registry.makeGauge(name: "process_start_time_seconds", help: "Start time of the process since the Unix epoch, in seconds.")
            .set(Date().timeIntervalSince1970)
        let logger = Logger(label: label)
        let configuration = try loadConfiguration()
        var services: [any Service]
        let unfinishedWork: @Sendable () -> Logger.Metadata
        do {
            (services, unfinishedWork) = try makeServices(configuration, logger, registry)
        } catch {
            throw ValidationError("configuration \(config): \(error)")
        }
        // First in the group, so that it stops last: the spans of the others' shutdown are exported.
        if let tracing = try TracingBootstrap.start(configuration.tracing, serviceName: label, logger: logger) {
            services.insert(tracing, at: 0)
        }
        let stop = ProcessStopController(deadline: configuration.worker.shutdownDeadline, logger: logger, unfinishedWork: unfinishedWork)
        let status = try await stop.run(services)
        if status != .stopped {
            throw ExitCode(status.code)
        }
    }
}
