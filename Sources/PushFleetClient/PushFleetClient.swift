import Foundation

/// A device's connection to the PushFleet online channel: connects to a gateway with a fresh
/// connect token, hands each notification to the app once (``events``), sends the app's acks,
/// and reconnects when the connection ends, by ``ReconnectPolicy``: at once (spread) to the next
/// gateway after a drain, after a backoff with full jitter otherwise, and not at all after a
/// close that reconnecting cannot fix (another app, an unknown app, a newer connection of the
/// device). Messages replayed from the device's inbox come the same way, marked
/// ``PushMessage/replay``. A message the app acknowledged that comes again (live and replayed, or
/// again after a reconnect) is acknowledged again without reaching the app twice; one it did not
/// acknowledge comes to it again.
///
/// ```swift
/// let api = PushFleetAPI(baseURL: apiURL, app: "news", device: tokenHex, deviceKey: key)
/// let client = PushFleetClient(gateways: [gatewayURL], transport: URLSessionWebSocketTransport()) {
///     try await api.connectToken()
/// }
/// Task { await client.run() }
/// for await event in client.events {
///     if case .message(let message) = event {
///         show(message)
///         await client.acknowledge(message)
///     }
/// }
/// ```
public actor PushFleetClient {
    /// What happens to the connection, and the messages it brings.
    public enum Event: Sendable, Equatable {
        /// The gateway welcomed the connection.
        case connected(gateway: String, connection: String)
        /// A notification, for the app to show and then ``PushFleetClient/acknowledge(_:)``.
        case message(PushMessage)
        /// The connection ended (`code` the gateway's close code, `nil` when it failed or
        /// dropped); the client reconnects after `reconnectIn`.
        case disconnected(code: UInt16?, reason: String, reconnectIn: Duration)
        /// The client stopped: ``PushFleetClient/stop()`` was called, or a close said not to
        /// reconnect. The last event.
        case stopped(reason: String)
    }

    /// The client's events, in order; read them for as long as the client runs.
    public nonisolated let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let gateways: [URL]
    private let transport: any WebSocketTransport
    private let policy: ReconnectPolicy
    private let connectToken: @Sendable () async throws -> String
    private let random: @Sendable () -> Double

    private var session: (any WebSocketSession)?
    private var recent = RecentMessages()
    private var stopRequested = false
    /// How the current connection went: welcomed, and how it ended.
    private var welcomed = false
    private var ending: (code: UInt16?, reason: String) = (nil, "")

    /// - Parameters:
    ///   - gateways: the connect URLs (`wss://…/v1/apps/{app}/connect`), tried in turn.
    ///   - connectToken: a new connect token for each connection (``PushFleetAPI/connectToken()``).
    ///   - random: a fraction in `0..<1` for the jitter; tests pass their own.
    public init(
        gateways: [URL], transport: any WebSocketTransport, policy: ReconnectPolicy = ReconnectPolicy(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        connectToken: @escaping @Sendable () async throws -> String
    ) {
        precondition(!gateways.isEmpty, "a client needs a gateway to connect to")
        self.gateways = gateways
        self.transport = transport
        self.policy = policy
        self.random = random
        self.connectToken = connectToken
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
    }

    /// Connects, and reconnects, until ``stop()`` or a close that says not to; then ends
    /// ``events``.
    public func run() async {
        var attempt = 0
        var next = 0
        while !stopRequested, !Task.isCancelled {
            await connectOnce(to: gateways[next % gateways.count])
            if welcomed { attempt = 0 }
            if stopRequested { break }
            let decision = ReconnectPolicy.decide(closeCode: ending.code)
            guard let delay = policy.delay(decision, attempt: attempt, random: random()) else {
                if case .stop(let reason) = decision { finish(reason) }
                return
            }
            attempt += 1
            next += 1
            continuation.yield(.disconnected(code: ending.code, reason: ending.reason, reconnectIn: delay))
            try? await Task.sleep(for: delay)
        }
        finish("stopped")
    }

    /// Acknowledges `message` on the connection it came on (the gateway then counts it
    /// delivered and, for an inbox message, removes it). After a reconnect the ack is not sent:
    /// the message comes again, from the inbox or APNs.
    public func acknowledge(_ message: PushMessage) async {
        recent.insert(message.id)
        try? await session?.send(text: ClientFrames.ack(id: message.id))
    }

    /// Closes the connection and stops reconnecting.
    public func stop() async {
        stopRequested = true
        await session?.close()
    }

    private func connectOnce(to url: URL) async {
        welcomed = false
        ending = (nil, "")
        do {
            let token = try await connectToken()
            try await transport.withConnection(to: url, bearer: token) { session in
                await self.attach(session)
                for await event in session.events {
                    await self.handle(event, on: session)
                }
            }
        } catch {
            ending = (nil, "\(error)")
        }
        session = nil
    }

    private func attach(_ session: any WebSocketSession) async {
        self.session = session
        if stopRequested { await session.close() }
    }

    private func handle(_ event: WebSocketEvent, on session: any WebSocketSession) async {
        switch event {
        case .closed(let code, let reason):
            ending = (code, reason)
        case .text(let text):
            switch try? ClientFrames.parse(text) {
            case .welcome(let gateway, let connection):
                welcomed = true
                continuation.yield(.connected(gateway: gateway, connection: connection))
            case .push(let message):
                if recent.contains(message.id) {
                    try? await session.send(text: ClientFrames.ack(id: message.id))
                } else {
                    continuation.yield(.message(message))
                }
            case .error, .other, nil:
                break
            }
        }
    }

    private func finish(_ reason: String) {
        continuation.yield(.stopped(reason: reason))
        continuation.finish()
    }
}
