/// A Live Activity's id as the app reports it with the activity's update token (ActivityKit's
/// `Activity.id`, a UUID): 1 to 128 characters of `A-Z a-z 0-9 . _ -`.
public struct LiveActivityID: Hashable, Sendable, CustomStringConvertible {
    public static let maxLength = 128

    public let rawValue: String

    public init?(_ text: String) {
        guard text.isIdentifier(maxBytes: Self.maxLength, punctuation: "._-") else { return nil }
        rawValue = text
    }

    public var description: String { rawValue }
}

extension String {
    /// 1 to `maxBytes` bytes of ASCII letters, digits and the characters of `punctuation`.
    func isIdentifier(maxBytes: Int, punctuation: String) -> Bool {
        let allowed = Set(punctuation.utf8)
        return (1...maxBytes).contains(utf8.count)
            && utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || allowed.contains(byte)
            }
    }
}
