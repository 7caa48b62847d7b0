import ArgumentParser
import PushAPI
import PushConfiguration

/// `pushfleet api`: the HTTP API (devices, push, job status and cancel, receipts, health,
/// metrics) on `api.host:api.port`. SIGTERM or SIGINT stop it gracefully.
struct APICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Serve the HTTP API: devices, push, job status and cancel, receipts, /healthz, /readyz, /metrics.")

    @OptionGroup var options: ProcessOptions

    @Option(help: "Listen on this port instead of api.port.")
    var port: Int?

    func run() async throws {
        if let port, !(0...65535).contains(port) {
            throw ValidationError("--port must be 0...65535")
        }
        try await options.runService(label: "pushfleet.api") { configuration, logger, registry in
            var configuration = configuration
            if let port { configuration.api.port = port }
            return [PushAPIServer(configuration: configuration, logger: logger, registry: registry)]
        }
    }
}
