import Testing

@testable import PushStore

@Suite("Bucket groups of a walk")
struct BucketGroupTests {
    @Test("a group doubles after each sparse read, up to its largest, and stays after a dense one")
    func growsWhileSparse() {
        var group = BucketGroup(first: 16, largest: 256, sparse: 250)
        var sizes: [Int] = []
        for _ in 0..<6 {
            sizes.append(group.size)
            group.read(0)
        }
        #expect(sizes == [16, 32, 64, 128, 256, 256])
        var dense = BucketGroup(first: 16, largest: 256, sparse: 250)
        dense.read(250)
        #expect(dense.size == 16, "a read of 250 is not sparse")
        dense.read(249)
        #expect(dense.size == 32)
    }

    @Test("ranges stop at the last unit")
    func rangesStopAtTheEnd() {
        var group = BucketGroup(first: 16, largest: 256, sparse: 250)
        var unit = 0
        var ranges: [Range<Int>] = []
        while unit < 1_024 {
            let range = group.range(from: unit, of: 1_024)
            ranges.append(range)
            unit = range.upperBound
            group.read(0)
        }
        #expect(ranges.map(\.count) == [16, 32, 64, 128, 256, 256, 256, 16])
        #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == 1_024)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
    }
}
