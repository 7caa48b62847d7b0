/// One argument of a Redis command, sent binary safe.
///
/// Write string and integer arguments as literals (`["SET", "key", 42]`) and pass raw bytes with
/// ``bytes(_:)``; strings are sent as UTF-8, integers in decimal.
public enum RedisArgument: Sendable, Hashable {
    /// Raw bytes, sent as they are (they may contain `0x00`, `\r\n` and anything else).
    case bytes([UInt8])
    /// A string, sent as its UTF-8 encoding.
    case string(String)
    /// An integer, sent in decimal as Redis expects numbers.
    case integer(Int)
}

extension RedisArgument: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension RedisArgument: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int) {
        self = .integer(value)
    }
}
