/// The value of the `apns-id` header: a UUID in its canonical 8-4-4-4-12 hexadecimal form.
///
/// Generating one must be cheap (one per notification on the hot path), so ``random()`` draws
/// from the system generator directly instead of going through Foundation's `UUID`.
public struct APNsID: Hashable, Sendable, CustomStringConvertible {
    /// The lowercase canonical text.
    public let uuidString: String

    /// Parses a canonical UUID (either case); `nil` for anything else.
    public init?(_ text: String) {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return nil }
        for (index, byte) in utf8.enumerated() {
            switch index {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return nil }
            default:
                guard Self.hexValue(byte) != nil else { return nil }
            }
        }
        self.uuidString = text.lowercased()
    }

    private init(uncheckedLowercase uuidString: String) {
        self.uuidString = uuidString
    }

    /// A random (version 4) UUID.
    public static func random() -> APNsID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A random (version 4) UUID from the given generator.
    public static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> APNsID {
        var high = generator.next()
        var low = generator.next()
        high = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000  // version 4
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // variant 10
        let text = String(unsafeUninitializedCapacity: 36) { buffer in
            var position = 0
            func put(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    let nibble = UInt8((value >> UInt64(shift)) & 0xF)
                    buffer[position] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
                    position += 1
                }
            }
            func dash() {
                buffer[position] = UInt8(ascii: "-")
                position += 1
            }
            put(high >> 32, nibbles: 8)
            dash()
            put((high >> 16) & 0xFFFF, nibbles: 4)
            dash()
            put(high & 0xFFFF, nibbles: 4)
            dash()
            put(low >> 48, nibbles: 4)
            dash()
            put(low & 0xFFFF_FFFF_FFFF, nibbles: 12)
            return position
        }
        return APNsID(uncheckedLowercase: text)
    }

    public var description: String { uuidString }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
