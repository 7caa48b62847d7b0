import APNsCore

/// A notification that got no answer from APNs: timeouts, lost connections, TLS or credential
/// problems, shutdown. (Answers, including refusals, are ``APNsResponse`` values.)
public struct APNsError: Error, Sendable, CustomStringConvertible {
    /// What went wrong; extensible.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        fileprivate let responseClass: APNsResponseClass

        /// No answer within the request timeout (waiting for a stream included).
        public static let timeout = Code(name: "timeout", responseClass: .retryable)
        /// The connection closed while the request was in flight: APNs may or may not have it.
        public static let connectionLost = Code(name: "connectionLost", responseClass: .retryable)
        /// No connection to APNs could be opened (TCP, TLS, or HTTP/2 setup failed).
        public static let connectFailed = Code(name: "connectFailed", responseClass: .retryable)
        /// Streams were refused more often than the client retries them.
        public static let refused = Code(name: "refused", responseClass: .retryable)
        /// Too many callers are already waiting for a stream.
        public static let tooManyWaiters = Code(name: "tooManyWaiters", responseClass: .retryable)
        /// The credential's key or certificate cannot be used.
        public static let invalidCredential = Code(name: "invalidCredential", responseClass: .providerAuthentication)
        /// The client was shut down.
        public static let shutdown = Code(name: "shutdown", responseClass: .permanent)
        /// The calling task was cancelled.
        public static let cancelled = Code(name: "cancelled", responseClass: .permanent)

        public var description: String { name }
    }

    public let code: Code
    /// The error underneath, if any.
    public let underlying: (any Error)?
    public let file: String
    public let line: Int

    public init(_ code: Code, underlying: (any Error)? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    /// How a sender should treat the notification.
    public var responseClass: APNsResponseClass { code.responseClass }

    /// Whether sending again may succeed.
    public var isRetryable: Bool { responseClass == .retryable }

    public var description: String {
        "APNsError.\(code)\(underlying.map { ": \($0)" } ?? "") (\(file):\(line))"
    }
}
