import Logging
import OTel
import PushConfiguration
import ServiceLifecycle
import Tracing

/// Turns traces on for a long-running process when `tracing.otlp-endpoint` is set: an
/// OpenTelemetry tracer (swift-otel) with W3C trace context, head sampling at
/// `tracing.sample-rate` (a parent's decision is followed), spans batched and exported over
/// OTLP/HTTP (protobuf). Without an endpoint nothing is bootstrapped: the libraries' spans are
/// no-ops and no trace context is written.
enum TracingBootstrap {
    /// The tracer's service (it exports what is batched and flushes on shutdown), or `nil` with
    /// tracing off. Call once per process, before the services start.
    static func start(_ settings: TracingSettings, serviceName: String, logger: Logger) throws -> (any Service)? {
        guard let endpoint = settings.otlpEndpoint else { return nil }
        guard let sampler = OTel.Configuration.TracesConfiguration.SamplerConfiguration.parentBasedTraceIDRatio(ratio: settings.sampleRate) else {
            throw TracingSettingsError(message: "tracing.sample-rate \(settings.sampleRate) is not a ratio from 0 to 1")
        }
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.enabled = true
        configuration.traces.exporter = .otlp
        configuration.traces.sampler = sampler
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.traces.otlpExporter.endpoint = endpoint
        configuration.propagators = [.traceContext]
        configuration.diagnosticLogger = .custom(logger)
        let (tracer, service) = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(tracer)
        logger.info("tracing on", metadata: ["otlp-endpoint": "\(endpoint)", "sample-rate": "\(settings.sampleRate)"])
        return service
    }
}

struct TracingSettingsError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
