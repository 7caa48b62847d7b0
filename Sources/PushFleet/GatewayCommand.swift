import ArgumentParser
import PushAPI
import PushConfiguration
import PushGateway
import ServiceLifecycle

/// `pushfleet gateway`: the online channel's WebSocket server on `gateway.host:gateway.port`,
/// with `/healthz`, `/readyz` and `/metrics` on `metrics.port`. SIGTERM or SIGINT drain it: every
/// client is told to reconnect (1001) before the process exits.
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Serve the online channel: WebSocket connections of open apps, with presence in Redis (docs/online.md).")

    @OptionGroup var options: ProcessOptions

    @Option(help: "Listen on this port instead of gateway.port.")
    var port: Int?

    func run() async throws {
        if let port, !(0...65535).contains(port) {
            throw ValidationError("--port must be 0...65535")
        }
        try await options.runService(label: "pushfleet.gateway") { configuration, logger, registry in
            var configuration = configuration
            if let port { configuration.gateway.port = port }
            var services: [any Service] = [try PushGatewayServer(configuration: configuration, logger: logger)]
            if let metricsPort = configuration.metrics.port {
                services.append(OperationsServer(configuration: configuration, registry: registry, port: metricsPort, logger: logger))
            }
            return services
        }
    }
}
