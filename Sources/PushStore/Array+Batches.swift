extension Array {
    /// The elements in order, cut into arrays of `size` (the last may be shorter): the script
    /// calls of a shard's patches or reads, the batches of a bulk registration.
    func batches(of size: Int) -> [[Element]] {
        precondition(size > 0, "a batch holds at least one element")
        return stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
