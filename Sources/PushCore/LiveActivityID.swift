/// A Live Activity's id as the app reports it with the activity's update token (ActivityKit's
/// `Activity.id`, a UUID): 1 to 128 characters of `A-Z a-z 0-9 . _ -`.
public struct LiveActivityID: Hashable, Sendable, CustomStringConvertible {
    public static let maxLength = 128

    public let rawValue: String

    public init?(_ text: String) {
        let utf8 = text.utf8
        guard (1...Self.maxLength).contains(utf8.count),
            utf8.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            })
        else { return nil }
        rawValue = text
    }

    public var description: String { rawValue }
}
