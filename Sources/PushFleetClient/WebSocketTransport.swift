import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a connection to a gateway tells its client.
public enum WebSocketEvent: Sendable, Equatable {
    /// A whole text frame.
    case text(String)
    /// The connection ended: the gateway's close code and reason, or `nil` when it failed or
    /// dropped without a close frame. The last event.
    case closed(code: UInt16?, reason: String)
}

/// One open WebSocket connection: its events, and a way to send text frames on it (from any
/// task).
public protocol WebSocketSession: Sendable {
    /// The connection's events; ends with ``WebSocketEvent/closed(code:reason:)``.
    var events: AsyncStream<WebSocketEvent> { get }
    func send(text: String) async throws
    /// Closes the connection normally (1000); ``events`` ends.
    func close() async
}

/// How a client opens WebSocket connections. ``URLSessionWebSocketTransport`` is Foundation's
/// (Apple platforms; Linux where the system's libcurl was built with WebSockets); the
/// `PushFleetClientNIO` module has one on SwiftNIO for Linux servers and tests.
public protocol WebSocketTransport: Sendable {
    /// Opens a connection to `url` with `Authorization: Bearer <bearer>`, runs `body` with it
    /// and closes it when `body` returns.
    func withConnection(to url: URL, bearer: String, _ body: @Sendable (any WebSocketSession) async throws -> Void) async throws
}

/// Foundation's WebSocket API (`URLSessionWebSocketTask`). Pings are answered by Foundation.
public struct URLSessionWebSocketTransport: WebSocketTransport {
    private let session: URLSession

    public init(session: URLSession = .shared) {
        self.session = session
    }

    public func withConnection(to url: URL, bearer: String, _ body: @Sendable (any WebSocketSession) async throws -> Void) async throws {
        var request = URLRequest(url: url)
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        let task = session.webSocketTask(with: request)
        task.resume()
        let connection = TaskSession(task: task)
        defer { task.cancel(with: .normalClosure, reason: nil) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await connection.pump() }
            try await body(connection)
            group.cancelAll()
        }
    }

    private struct TaskSession: WebSocketSession {
        let task: URLSessionWebSocketTask
        let events: AsyncStream<WebSocketEvent>
        private let continuation: AsyncStream<WebSocketEvent>.Continuation

        init(task: URLSessionWebSocketTask) {
            self.task = task
            (events, continuation) = AsyncStream.makeStream(of: WebSocketEvent.self)
        }

        /// Reads until the connection ends.
        func pump() async {
            while !Task.isCancelled {
                do {
                    switch try await task.receive() {
                    case .string(let text): continuation.yield(.text(text))
                    case .data: continue
                    @unknown default: continue
                    }
                } catch {
                    let code = task.closeCode == .invalid ? nil : UInt16(exactly: task.closeCode.rawValue)
                    let reason = task.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? "\(error)"
                    continuation.yield(.closed(code: code, reason: reason))
                    break
                }
            }
            continuation.finish()
        }

        func send(text: String) async throws {
            try await task.send(.string(text))
        }

        func close() async {
            task.cancel(with: .normalClosure, reason: nil)
        }
    }
}
