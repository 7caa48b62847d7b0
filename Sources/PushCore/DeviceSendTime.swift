/// When each device's notification of a job goes out, by the device (`send-at` as an object):
///
/// - `{"local-time": "09:00"}`: at that time of day in the device's time zone (the app's for a
///   device that gave none), the next time it comes after the job is expanded: within 24 hours;
/// - `{"best-hour": {"within": "24h"}}`: at the start of the hour the device reads most in (its
///   ``ReceiptHours``; for a device with too few receipts, the hour of the week with the best
///   delivery rate of the job's tag or of the app), within that many hours of the expansion.
public enum DeviceSendTime: Hashable, Sendable {
    case localTime(hour: Int, minute: Int)
    case bestHour(withinHours: Int)

    /// The longest a best-hour window may be: a week.
    public static let maxWithinHours = 168

    init(json: JSONValue, at path: FieldPath) throws(MessageValidationError) {
        let object = try json.decodeObject(at: path)
        try object.rejectUnknownKeys(["local-time", "best-hour"], at: path)
        switch (object["local-time"], object["best-hour"]) {
        case (let value?, nil):
            let text = try value.decodeString(at: path.key("local-time"))
            guard let (hour, minute) = Self.clockTime(text) else {
                throw MessageValidationError(path.key("local-time"), .invalidValue, "'\(text)' is not a time of day HH:MM (00:00 to 23:59)")
            }
            self = .localTime(hour: hour, minute: minute)
        case (nil, let value?):
            let best = try value.decodeObject(at: path.key("best-hour"))
            try best.rejectUnknownKeys(["within"], at: path.key("best-hour"))
            let withinPath = path.key("best-hour").key("within")
            let text = try best.require("within", at: path.key("best-hour")).decodeString(at: withinPath)
            guard text.hasSuffix("h"), let hours = Int(text.dropLast()), (1...Self.maxWithinHours).contains(hours),
                text.dropLast().allSatisfy(\.isASCIIDigitCharacter)
            else {
                throw MessageValidationError(withinPath, .invalidValue, "'\(text)' is not a window of 1h to \(Self.maxWithinHours)h")
            }
            self = .bestHour(withinHours: hours)
        default:
            throw MessageValidationError(
                path, .invalidValue,
                "as an object, must hold one of local-time ({\"local-time\": \"09:00\"}) and best-hour ({\"best-hour\": {\"within\": \"24h\"}})")
        }
    }

    var jsonValue: JSONValue {
        switch self {
        case .localTime(let hour, let minute):
            let two = { (number: Int) in number < 10 ? "0\(number)" : "\(number)" }
            return ["local-time": .string("\(two(hour)):\(two(minute))")]
        case .bestHour(let hours):
            return ["best-hour": ["within": .string("\(hours)h")]]
        }
    }

    /// `HH:MM`, two digits each, 00:00 to 23:59.
    static func clockTime(_ text: String) -> (Int, Int)? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
            bytes.enumerated().allSatisfy({ $0.offset == 2 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0.element) }),
            let hour = Int(text.prefix(2)), let minute = Int(text.suffix(2)), hour < 24, minute < 60
        else { return nil }
        return (hour, minute)
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
