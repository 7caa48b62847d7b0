/// A reply from Redis (RESP2), converted from hiredis's reply tree in one pass.
public enum RedisReply: Sendable, Hashable {
    /// A bulk string: binary-safe bytes.
    case bulk([UInt8])
    /// A status reply such as `OK` or `PONG`.
    case status(String)
    /// An integer reply.
    case integer(Int64)
    /// A multi-bulk reply.
    case array([RedisReply])
    /// The null bulk string or null array (a missing key, a timed-out `BLPOP`).
    case null
    /// An error reply, e.g. `WRONGTYPE Operation against a key holding the wrong kind of value`.
    ///
    /// ``RedisConnection/send(_:)`` throws these as ``RedisClientError/Code/serverError``;
    /// ``RedisConnection/pipeline(_:)`` returns them in place so one failing command does not hide
    /// the replies of the others.
    case error(String)
}

extension RedisReply {
    /// The integer value: an integer reply, or a bulk or status reply holding a decimal number
    /// (`GET` of a counter); `nil` otherwise.
    public var int: Int64? {
        switch self {
        case .integer(let value):
            value
        case .bulk(let bytes):
            Int64(String(decoding: bytes, as: UTF8.self))
        case .status(let string):
            Int64(string)
        case .array, .null, .error:
            nil
        }
    }

    /// The text of a bulk reply (decoded as UTF-8, invalid sequences repaired) or of a status
    /// reply; `nil` otherwise.
    public var string: String? {
        switch self {
        case .bulk(let bytes):
            String(decoding: bytes, as: UTF8.self)
        case .status(let string):
            string
        case .integer, .array, .null, .error:
            nil
        }
    }

    /// The bytes of a bulk reply, or the UTF-8 bytes of a status reply; `nil` otherwise.
    public var bytes: [UInt8]? {
        switch self {
        case .bulk(let bytes):
            bytes
        case .status(let string):
            Array(string.utf8)
        case .integer, .array, .null, .error:
            nil
        }
    }

    /// The elements of an array reply; `nil` otherwise (including the null array).
    public var array: [RedisReply]? {
        if case .array(let elements) = self { elements } else { nil }
    }

    /// Whether this is the null reply.
    public var isNull: Bool {
        self == .null
    }

    /// The message of an error reply; `nil` otherwise.
    public var errorMessage: String? {
        if case .error(let message) = self { message } else { nil }
    }
}
