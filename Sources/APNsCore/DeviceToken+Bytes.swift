extension DeviceToken {
    /// The token's binary form: one byte per two hex digits (32 bytes for today's APNs tokens),
    /// as APNs's binary interface carries it and the registry keys devices by it.
    ///
    /// ``DeviceToken`` guarantees an even number of hex digits, so every pair is a byte.
    public var bytes: [UInt8] {
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

    /// A token from its binary form.
    ///
    /// - Throws: ``DeviceTokenError`` when `bytes` is empty or longer than 100 bytes.
    public init(bytes: [UInt8]) throws(DeviceTokenError) {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        try self.init(hex: String(decoding: hex, as: UTF8.self))
    }

    private static func nibble(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: 0
        }
    }
}
