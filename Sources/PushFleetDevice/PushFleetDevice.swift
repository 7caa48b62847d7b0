import ArgumentParser
import Foundation
import PushFleetClient
import PushFleetClientNIO

#if canImport(Glibc)
    import Glibc
#endif

/// `pushfleet-device`: one device of an app on the online channel, through PushFleetClient: asks
/// the API for connect tokens with a device key, stays connected to the gateways (reconnecting by
/// the client's policy), acknowledges each message and, with `--opened`, sends an `opened`
/// receipt for it. Prints one JSON line per client event. Stops on SIGTERM or SIGINT. For trying
/// the channel out and for the tests that drive the client against real gateways.
@main
struct PushFleetDevice: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushfleet-device", abstract: "Connect one device to the PushFleet online channel and print what it gets.")

    @Option(help: "The PushFleet API's base URL (for connect tokens and receipts).")
    var api: String

    @Option(help: "The app id.")
    var app: String

    @Option(help: "The device's token, hex.")
    var device: String

    @Option(help: "The environment variable holding a device key of the app.")
    var deviceKeyEnv = "PUSHFLEET_DEVICE_KEY"

    @Option(name: .customLong("gateway"), help: "A gateway's connect URL (ws:// or wss://…/v1/apps/{app}/connect); repeat for more, tried in turn.")
    var gateways: [String]

    @Flag(help: "Do not acknowledge messages (the gateway falls back after its ack timeout).")
    var noAck = false

    @Flag(help: "Send an opened receipt for each message.")
    var opened = false

    @Option(help: "The transport: nio (SwiftNIO) or urlsession (Foundation's URLSessionWebSocketTask).")
    var transport = "nio"

    @Option(help: "The backoff's first ceiling, in milliseconds.")
    var backoffBaseMs = 500

    func validate() throws {
        guard !gateways.isEmpty else { throw ValidationError("--gateway: give at least one") }
        guard gateways.allSatisfy({ URL(string: $0) != nil }), URL(string: api) != nil else { throw ValidationError("--gateway, --api: not URLs") }
        guard ["nio", "urlsession"].contains(transport) else { throw ValidationError("--transport: nio or urlsession, got '\(transport)'") }
        guard ProcessInfo.processInfo.environment[deviceKeyEnv]?.isEmpty == false else {
            throw ValidationError("--device-key-env: \(deviceKeyEnv) is not set")
        }
    }

    func run() async throws {
        let key = ProcessInfo.processInfo.environment[deviceKeyEnv] ?? ""
        let api = PushFleetAPI(baseURL: URL(string: self.api)!, app: app, device: device, deviceKey: key)
        let chosen: any WebSocketTransport = transport == "nio" ? NIOWebSocketTransport() : URLSessionWebSocketTransport()
        let client = PushFleetClient(
            gateways: gateways.map { URL(string: $0)! }, transport: chosen, policy: ReconnectPolicy(base: .milliseconds(backoffBaseMs))
        ) { try await api.connectToken() }
        let signals = Self.stopOnSignals { Task { await client.stop() } }
        defer { signals.forEach { $0.cancel() } }
        let running = Task { await client.run() }
        for await event in client.events {
            Self.print(event)
            if case .message(let message) = event {
                if !noAck { await client.acknowledge(message) }
                if opened {
                    do {
                        try await api.receipt(job: message.job, event: "opened")
                    } catch {
                        Self.line(["event": "receipt-failed", "job": message.job, "error": "\(error)"])
                    }
                }
            }
        }
        await running.value
    }

    static func stopOnSignals(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler(handler: stop)
            source.resume()
            return source
        }
    }

    static func print(_ event: PushFleetClient.Event) {
        switch event {
        case .connected(let gateway, let connection):
            line(["event": "connected", "gateway": gateway, "connection": connection])
        case .message(let message):
            let notification = (try? JSONSerialization.jsonObject(with: message.notification)) ?? [:]
            line([
                "event": "message", "id": message.id, "job": message.job, "push-type": message.pushType, "replay": message.replay,
                "notification": notification,
            ])
        case .disconnected(let code, let reason, let delay):
            line([
                "event": "disconnected", "code": code.map { Int($0) } ?? NSNull(), "reason": reason,
                "reconnect-in-ms": Int(delay.components.seconds * 1_000 + delay.components.attoseconds / 1_000_000_000_000_000),
            ])
        case .stopped(let reason):
            line(["event": "stopped", "reason": reason])
        }
    }

    static func line(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
