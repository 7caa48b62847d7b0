import APNsCore
import Foundation
import Testing

@Suite("Base64url")
struct Base64URLTests {
    @Test("RFC 4648's vectors, without padding, and the two URL-safe characters")
    func vectors() {
        let vectors = [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
    }

    @Test("every length of random bytes round-trips, and agrees with Foundation's base64")
    func roundTrips() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            #expect(Base64URL.decode(encoded) == bytes)
            var standard = Data(bytes).base64EncodedString()
            while standard.hasSuffix("=") { standard.removeLast() }
            #expect(encoded == standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"))
        }
    }

    @Test("padding, standard base64's characters, a lone last character and stray bits are refused")
    func refuses() {
        // "Zh" and "Zm9" carry set bits past their last byte ("Zg" and "Zm8" are "f" and "fo").
        for text in ["Zg==", "Zm9v+", "ab/c", "a", "Zm9vY", "Zh", "Zm9", "Zm=v", "Zm 9v"] {
            #expect(Base64URL.decode(text) == nil, "\(text)")
        }
    }
}
