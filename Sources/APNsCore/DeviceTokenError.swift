/// Why a string is not a device token.
public enum DeviceTokenError: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case notHex
    case oddLength(Int)
    case tooLong(Int)

    public var description: String {
        switch self {
        case .empty: "device token is empty"
        case .notHex: "device token must be hexadecimal"
        case .oddLength(let count): "device token must have an even number of hex digits, has \(count)"
        case .tooLong(let count):
            "device token has \(count) hex digits, more than \(DeviceToken.maxHexLength)"
        }
    }
}
