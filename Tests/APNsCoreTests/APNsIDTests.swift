import APNsCore
import Foundation
import Testing

/// `apns-id` values.
@Suite("apns-id")
struct APNsIDTests {
    @Test("random ids are version 4 UUIDs Foundation agrees with, and distinct")
    func random() {
        var seen = Set<APNsID>()
        for _ in 0..<1000 {
            let id = APNsID.random()
            let parsed = UUID(uuidString: id.uuidString)
            #expect(parsed?.uuidString.lowercased() == id.uuidString)
            #expect(Array(id.uuidString.utf8)[14] == UInt8(ascii: "4"))
            #expect("89ab".utf8.contains(Array(id.uuidString.utf8)[19]))
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }

    @Test("ids drawn from one fast generator are version 4 UUIDs and never repeat; generators differ")
    func fastGenerator() {
        var first = SplitMix64()
        var second = SplitMix64()
        var seen = Set<APNsID>()
        for _ in 0..<50_000 {
            let id = APNsID.random(using: &first)
            #expect(UUID(uuidString: id.uuidString) != nil)
            #expect(Array(id.uuidString.utf8)[14] == UInt8(ascii: "4"))
            seen.insert(id)
        }
        #expect(seen.count == 50_000)
        #expect(!seen.contains(APNsID.random(using: &second)))
    }

    @Test("parsing accepts the canonical form in either case only")
    func parse() {
        #expect(APNsID("123E4567-E89B-12D3-A456-426614174000")?.uuidString == "123e4567-e89b-12d3-a456-426614174000")
        #expect(APNsID("123e4567e89b12d3a456426614174000") == nil)
        #expect(APNsID("123e4567-e89b-12d3-a456-42661417400g") == nil)
        #expect(APNsID("") == nil)
    }
}
