/// Input rules of the send-stage state (``JobStore``, ``ResendBuffer``, ``RateLimiter``,
/// ``JobSchedule``, ``AppSuspension``); each throws a ``StoreError`` naming the field.
extension StoreValidation {
    static let maxJobIDBytes = 128
    static let maxNameBytes = 128

    /// 1–128 bytes of UTF-8, no `{` or `}` (the job id is a key's hash tag) and no control
    /// characters.
    static func jobID(_ jobID: String, field: String = "jobID") throws(StoreError) {
        try name(jobID, field: field, what: "job id", maxBytes: maxJobIDBytes)
        if jobID.utf8.contains(where: { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "}") }) {
            throw StoreError(.invalidArgument, field: field, message: "job id must not hold '{' or '}'")
        }
    }

    /// A counter name, chunk id or rate-limit scope: 1–128 bytes of UTF-8, no control characters.
    static func name(
        _ value: String,
        field: @autoclosure () -> String,
        what: String,
        maxBytes: Int = maxNameBytes
    ) throws(StoreError) {
        try text(value, field: field(), code: .invalidArgument, maxBytes: maxBytes, what: what)
    }

    /// A number that must be at least `minimum`.
    static func atLeast<Number: BinaryInteger>(_ minimum: Number, _ value: Number, field: String) throws(StoreError) {
        guard value >= minimum else {
            throw StoreError(.invalidArgument, field: field, message: "must be at least \(minimum), is \(value)")
        }
    }
}
