import Hummingbird
import Logging
import NIOCore

/// Runs one of PushFleet's HTTP servers (the API, a worker's health and metrics endpoints).
enum HTTPServing {
    /// Serves `responder` on `host:port` until graceful shutdown, telling `onListening` the bound
    /// port (the system's choice for port 0). Returns how serving ended, so the caller can close
    /// its clients either way before rethrowing.
    static func serve<Responder: HTTPResponder>(
        _ responder: Responder, host: String, port: Int, what: String, logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void
    ) async -> Result<Void, any Error> where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
        let application = Application(
            responder: responder,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "PushFleet"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.info("\(what) listening", metadata: ["port": "\(port)"])
                await onListening(port)
            },
            logger: logger)
        do {
            try await application.run()
            return .success(())
        } catch {
            return .failure(error)
        }
    }
}
