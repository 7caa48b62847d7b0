import CRdKafka

/// An error from the Kafka layer: a broker, librdkafka, or this wrapper's own rules.
public struct KafkaError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Extensible: new codes are new static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate let name: String

        /// librdkafka rejected a configuration property or value.
        public static let configuration = Code(name: "configuration")
        /// A client handle could not be created.
        public static let clientCreation = Code(name: "clientCreation")
        /// The broker or librdkafka did not confirm delivery of a message.
        public static let delivery = Code(name: "delivery")
        /// A message could not be enqueued for sending.
        public static let produce = Code(name: "produce")
        /// Subscribing, assigning or polling failed.
        public static let consume = Code(name: "consume")
        /// Committing offsets failed.
        public static let commit = Code(name: "commit")
        /// A topic could not be created or described.
        public static let admin = Code(name: "admin")
        /// The embedded cluster refused an operation.
        public static let embeddedCluster = Code(name: "embeddedCluster")
        /// The client is shutting down or already closed.
        public static let closed = Code(name: "closed")
        /// An operation did not finish within its deadline.
        public static let timeout = Code(name: "timeout")

        public var description: String { name }
    }

    public let code: Code
    public let message: String
    /// librdkafka's error code, when the failure came from librdkafka.
    public let underlying: KafkaErrorCode?
    /// Whether trying the same operation again may succeed.
    public let isRetryable: Bool
    public let file: String
    public let line: UInt

    public init(
        code: Code,
        message: String,
        underlying: KafkaErrorCode? = nil,
        isRetryable: Bool = false,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.isRetryable = isRetryable
        self.file = file
        self.line = line
    }

    public var description: String {
        var text = "KafkaError.\(code): \(message)"
        if let underlying { text += " (\(underlying))" }
        return text
    }
}

/// A librdkafka response or internal error code (`rd_kafka_resp_err_t`), with its name.
public struct KafkaErrorCode: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    package init(_ err: rd_kafka_resp_err_t) {
        self.rawValue = err.rawValue
    }

    package var cValue: rd_kafka_resp_err_t { rd_kafka_resp_err_t(rawValue: rawValue) }

    /// The broker's or librdkafka's name for the code, such as `NOT_LEADER_OR_FOLLOWER`.
    public var name: String { String(cString: rd_kafka_err2name(cValue)) }

    public var description: String { "\(name): \(String(cString: rd_kafka_err2str(cValue)))" }

    /// Codes for conditions that pass: timeouts, lost connections, elections in progress.
    public var isTransient: Bool {
        switch cValue {
        case RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR__TRANSPORT,
            RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, RD_KAFKA_RESP_ERR_NOT_CONTROLLER,
            RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
            RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_NOT_COORDINATOR,
            RD_KAFKA_RESP_ERR__MSG_TIMED_OUT, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
            true
        default:
            false
        }
    }

    public static let noError = KafkaErrorCode(RD_KAFKA_RESP_ERR_NO_ERROR)
    public static let notLeaderOrFollower = KafkaErrorCode(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION)
    public static let requestTimedOut = KafkaErrorCode(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT)
    /// librdkafka's own code for a lost connection; injected into the embedded cluster, it makes
    /// the broker close the connection the request came on.
    public static let transport = KafkaErrorCode(RD_KAFKA_RESP_ERR__TRANSPORT)
    public static let notEnoughReplicas = KafkaErrorCode(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS)
    public static let coordinatorNotAvailable = KafkaErrorCode(
        RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE)
    public static let unknownTopicOrPartition = KafkaErrorCode(
        RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
    public static let messageTimedOut = KafkaErrorCode(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)
    /// A message over `message.max.bytes`, refused before it was queued.
    public static let messageSizeTooLarge = KafkaErrorCode(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)
    public static let topicAuthorizationFailed = KafkaErrorCode(
        RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED)
}
