/// An error from the Redis module: what went wrong (``code``), in words (``message``), what
/// caused it, and whether trying again can help.
public struct RedisClientError: Error, CustomStringConvertible {
    /// The kind of failure. An extensible set: switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case connectionFailed
            case connectionClosed
            case timeout
            case serverError
            case protocolError
            case authenticationFailed
            case clientShutdown
            case crossSlot
            case clusterUnavailable
            case notReplicated
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// No connection could be opened within the reconnect policy; the message names host:port.
        public static let connectionFailed = Code(.connectionFailed)
        /// The connection broke (or was closed) while a command was in flight or queued; the
        /// command may or may not have run on the server.
        public static let connectionClosed = Code(.connectionClosed)
        /// Connecting, or waiting for a reply, took longer than the configured timeout. The
        /// connection is discarded (a late reply would be mistaken for the next one); the next
        /// command reconnects.
        public static let timeout = Code(.timeout)
        /// The server answered with an error reply (`ERR …`, `WRONGTYPE …`, a script error); the
        /// message is the server's.
        public static let serverError = Code(.serverError)
        /// hiredis could not parse what the server sent, or a reply had an unexpected shape.
        public static let protocolError = Code(.protocolError)
        /// `AUTH` was refused (wrong password, unknown or disabled ACL user).
        public static let authenticationFailed = Code(.authenticationFailed)
        /// The client (pool) was shut down.
        public static let clientShutdown = Code(.clientShutdown)
        /// A command's or script call's keys hash to different cluster slots; nothing was sent.
        public static let crossSlot = Code(.crossSlot)
        /// No node of the cluster answered with its topology, or no node serves a slot.
        public static let clusterUnavailable = Code(.clusterUnavailable)
        /// A write ran on its master, but fewer replicas than required confirmed it (`WAIT`)
        /// within the timeout: a failover now could lose it, so it is not acknowledged. Typical
        /// of a master cut off from its replicas by a partition. The write may still survive;
        /// retry idempotent writes.
        public static let notReplicated = Code(.notReplicated)

        public var description: String {
            "\(base)"
        }
    }

    /// The kind of failure.
    public var code: Code
    /// A description for people: the server's error text, or what the client tried and saw.
    public var message: String
    /// The error this one wraps, if any (for `connectionFailed`, the last attempt's failure).
    public var underlying: (any Error)?
    /// Whether the same request may succeed if tried again later. A retryable error after a
    /// command was sent does not mean the command did not run: resend only idempotent commands.
    public var isRetryable: Bool
    /// The source file that raised the error.
    public var file: String
    /// The source line that raised the error.
    public var line: Int

    /// Creates an error; `isRetryable` defaults to what is usual for `code` (see
    /// ``isRetryableByDefault(code:message:)``).
    public init(
        _ code: Code,
        message: String,
        underlying: (any Error)? = nil,
        isRetryable: Bool? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.isRetryable = isRetryable ?? Self.isRetryableByDefault(code: code, message: message)
        self.file = file
        self.line = line
    }

    /// Transport failures and timeouts are retryable; of server errors only the transient ones
    /// (`LOADING`, `BUSY`, `TRYAGAIN`, `MASTERDOWN`, `CLUSTERDOWN`) are.
    public static func isRetryableByDefault(code: Code, message: String) -> Bool {
        switch code {
        case .connectionFailed, .connectionClosed, .timeout, .clusterUnavailable, .notReplicated:
            return true
        case .serverError:
            let prefix = message.prefix { $0 != " " }
            return ["LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "CLUSTERDOWN"].contains(prefix)
        default:
            return false
        }
    }

    public var description: String {
        var text = "RedisClientError.\(code): \(message)"
        if let underlying {
            text += " (underlying: \(underlying))"
        }
        return text + " [\(file):\(line)]"
    }
}
