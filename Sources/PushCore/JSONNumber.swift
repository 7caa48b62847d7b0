/// A JSON number, kept as the exact text it was written with.
///
/// Keeping the text (instead of converting to `Double`) means a payload's custom keys survive a
/// round trip byte for byte: `1.0` stays `1.0` and a 64-bit id such as `9007199254740993` is not
/// rounded. Equality is textual, so `1` and `1.0` are different values.
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    /// The number as written, in RFC 8259 grammar.
    public let text: String

    /// Returns `nil` unless `text` is a number in RFC 8259 grammar
    /// (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    public init?(text: String) {
        guard Self.isValid(Array(text.utf8)) else { return nil }
        self.text = text
    }

    /// A number whose text the caller has already checked with ``isValid(_:)``.
    init(validatedText text: String) {
        self.text = text
    }

    /// An integer number.
    public init(_ value: Int) {
        self.text = String(value)
    }

    /// A number with the shortest text that reads back as `value`; integral values within
    /// ±2^53 are written without a fraction. Returns `nil` for NaN and infinities.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        if value == value.rounded(), abs(value) <= 9_007_199_254_740_992 {
            self.text = String(Int(value))
        } else {
            self.text = String(describing: value)
        }
    }

    /// The nearest `Double`.
    public var doubleValue: Double {
        Double(text) ?? .nan
    }

    /// The value as an `Int` when it is integral and fits, as JSON Schema's `integer` type
    /// defines it: `3`, `3.0` and `3e0` are all the integer 3.
    public var intValue: Int? {
        if let exact = Int(text) { return exact }
        let double = doubleValue
        guard double == double.rounded(), let exact = Int(exactly: double) else { return nil }
        return exact
    }

    public var description: String { text }

    /// Whether `bytes` spell a number in RFC 8259 grammar.
    static func isValid<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> Bool where Bytes.Index == Int {
        var index = bytes.startIndex
        let end = bytes.endIndex
        func digits() -> Int {
            let start = index
            while index < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                index += 1
            }
            return index - start
        }
        if index < end, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < end else { return false }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return false
        }
        if index < end, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < end, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { return false }
        }
        return index == end
    }
}
