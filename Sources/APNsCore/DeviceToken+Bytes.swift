extension DeviceToken {
    /// The token's binary form: one byte per two hex digits (32 bytes for today's APNs tokens),
    /// as APNs's binary interface carries it and the registry keys devices by it.
    ///
    /// ``DeviceToken`` guarantees an even number of hex digits, so every pair is a byte.
    public var bytes: [UInt8] {
        // A native string's bytes are contiguous; `hex` has an even count of lowercase digits.
        if let bytes = hex.utf8.withContiguousStorageIfAvailable(Self.decode) {
            return bytes
        }
        return Array(hex.utf8).withUnsafeBufferPointer(Self.decode)
    }

    private static func decode(_ digits: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: digits.count / 2) { buffer, count in
            for index in 0..<digits.count / 2 {
                buffer[index] = nibble(digits[2 * index]) << 4 | nibble(digits[2 * index + 1])
            }
            count = digits.count / 2
        }
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
