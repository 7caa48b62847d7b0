import APNsCore

/// A notification that got no answer from APNs: timeouts, lost connections, TLS or credential
/// problems, shutdown. (Answers, including refusals, are ``APNsResponse`` values.)
public struct APNsError: Error, Sendable, CustomStringConvertible {
    /// What went wrong; extensible.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        fileprivate let isRetryable: Bool

        /// No answer within the request timeout (waiting for a stream included).
        public static let timeout = Code(name: "timeout", isRetryable: true)
        /// The connection closed while the request was in flight: APNs may or may not have it.
        public static let connectionLost = Code(name: "connectionLost", isRetryable: true)
        /// No connection to APNs could be opened (TCP, TLS, or HTTP/2 setup failed).
        public static let connectFailed = Code(name: "connectFailed", isRetryable: true)
        /// Streams were refused more often than the client retries them.
        public static let refused = Code(name: "refused", isRetryable: true)
        /// Too many callers are already waiting for a stream.
        public static let tooManyWaiters = Code(name: "tooManyWaiters", isRetryable: true)
        /// The credential's key or certificate cannot be used.
        public static let invalidCredential = Code(name: "invalidCredential", isRetryable: false)
        /// The client was shut down.
        public static let shutdown = Code(name: "shutdown", isRetryable: false)
        /// The calling task was cancelled.
        public static let cancelled = Code(name: "cancelled", isRetryable: false)

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

    /// Whether the same notification may succeed if sent again: the transport failed, APNs did
    /// not refuse it. (`shutdown` and `cancelled` are the caller's own doing; `invalidCredential`
    /// needs a fixed key or certificate.)
    public var isRetryable: Bool { code.isRetryable }

    public var description: String {
        "APNsError.\(code)\(underlying.map { ": \($0)" } ?? "") (\(file):\(line))"
    }
}
