/// The value of the `apns-priority` header: 10, 5 or 1.
public struct APNsPriority: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int

    private init(known rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Returns `nil` for a value APNs does not accept.
    public init?(rawValue: Int) {
        switch rawValue {
        case 10: self = .immediately
        case 5: self = .considerDevicePower
        case 1: self = .lowPower
        default: return nil
        }
    }

    /// Deliver now (10). Not allowed for background pushes.
    public static let immediately = Self(known: 10)
    /// Deliver with the device's power considerations (5).
    public static let considerDevicePower = Self(known: 5)
    /// Prioritise the device's power over everything (1).
    public static let lowPower = Self(known: 1)

    public var description: String { String(rawValue) }
}

extension APNsPriority: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(Int.self)
        guard let value = APNsPriority(rawValue: raw) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "priority must be 10, 5 or 1, got \(raw)")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
