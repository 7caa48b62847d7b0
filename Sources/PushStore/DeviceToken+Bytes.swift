import APNsCore

extension DeviceToken {
    /// The token's binary form: one byte per two hex digits (32 bytes for today's APNs tokens).
    ///
    /// ``DeviceToken`` guarantees an even number of hex digits, so every pair is a byte; the
    /// registry's bucket hashes and the receipts key devices by this form (`schemas/redis.md`).
    var markerBytes: [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8?
        for digit in hex.utf8 {
            let value = Self.nibble(digit)
            if let pending = high {
                result.append(pending << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return result
    }

    private static func nibble(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: 0
        }
    }
}
