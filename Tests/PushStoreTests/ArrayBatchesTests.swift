import Testing

@testable import PushStore

@Suite("Arrays cut into batches")
struct ArrayBatchesTests {
    @Test("in order, full batches then the rest; nothing for nothing")
    func batches() {
        #expect(Array(1...7).batches(of: 3) == [[1, 2, 3], [4, 5, 6], [7]])
        #expect(Array(1...6).batches(of: 3) == [[1, 2, 3], [4, 5, 6]])
        #expect(Array(1...2).batches(of: 500) == [[1, 2]])
        #expect([Int]().batches(of: 3).isEmpty)
        #expect(Array(0..<1_001).batches(of: 500).map(\.count) == [500, 500, 1])
    }
}
