public import NIOCore
public import PushCore

/// A payload whose `aps.badge` is each device's own number: the payload written once, split
/// around the badge's digits, and put together for each device without encoding JSON again.
package struct BadgedPayload: Sendable {
    private let prefix: [UInt8]
    private let suffix: [UInt8]
    /// The payload without `aps.badge`: for a device whose number is not kept (a resend to a
    /// token no longer registered).
    package let withoutBadge: ByteBuffer

    /// The payload of `notification` with its `aps.badge` (a rule or a number) replaced by each
    /// device's number; `nil` when it has no `aps` object.
    package init?(_ notification: APNsPayload) {
        guard var aps = notification.aps else { return nil }
        // Written with badge 0 and badge 1, the payloads differ in one byte: where the digits go.
        var object = notification.object
        aps["badge"] = .number(JSONNumber(0))
        object["aps"] = .object(aps)
        let zero = [UInt8](APNsPayload(object).payloadData())
        aps["badge"] = .number(JSONNumber(1))
        object["aps"] = .object(aps)
        let one = [UInt8](APNsPayload(object).payloadData())
        guard zero.count == one.count, let at = zero.indices.first(where: { zero[$0] != one[$0] }), zero[(at + 1)...] == one[(at + 1)...]
        else { return nil }
        prefix = Array(zero[..<at])
        suffix = Array(zero[(at + 1)...])
        aps["badge"] = nil
        object["aps"] = .object(aps)
        withoutBadge = ByteBuffer(bytes: APNsPayload(object).payloadData())
    }

    private static let allocator = ByteBufferAllocator()

    /// The payload carrying `badge` (a number of up to five digits: one allocation, the buffer's).
    package func payload(badge: Int) -> ByteBuffer {
        let digits = String(max(badge, 0))
        var buffer = Self.allocator.buffer(capacity: prefix.count + digits.utf8.count + suffix.count)
        buffer.writeBytes(prefix)
        buffer.writeString(digits)
        buffer.writeBytes(suffix)
        return buffer
    }
}
