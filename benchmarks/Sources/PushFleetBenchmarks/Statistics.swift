/// The summaries the benchmarks report over rounds.
enum Statistics {
    /// The middle value of `values` (the upper one of the two middles for an even count); `nil`
    /// when there are none. A round slowed by the machine's neighbours, or sped up, moves it
    /// less than it moves a mean.
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        return values.sorted()[values.count / 2]
    }
}
