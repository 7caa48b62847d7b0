import FlowControl

/// How long the simulator waits before answering a request.
public enum APNsSimulatorLatency: Sendable, Hashable {
    /// Answer as soon as the request is complete.
    case none
    /// Always the same delay.
    case fixed(Duration)
    /// Uniformly distributed between the bounds.
    case uniform(Duration, Duration)
    /// Roughly normal (the mean of three uniform draws), clamped at zero.
    case normal(mean: Duration, standardDeviation: Duration)

    /// Draws one delay in nanoseconds; `nil` means answer immediately.
    func sampleNanoseconds<Generator: RandomNumberGenerator>(using generator: inout Generator) -> Int64? {
        switch self {
        case .none:
            return nil
        case .fixed(let delay):
            return delay.nanoseconds
        case .uniform(let low, let high):
            let (a, b) = (low.nanoseconds, high.nanoseconds)
            return a >= b ? a : Int64.random(in: a...b, using: &generator)
        case .normal(let mean, let deviation):
            // Irwin–Hall with n = 3: the sum of three U(-1, 1) has variance 1.
            let sum = (0..<3).reduce(0.0) { partial, _ in partial + Double.random(in: -1...1, using: &generator) }
            let value = Double(mean.nanoseconds) + sum * Double(deviation.nanoseconds)
            return max(0, Int64(value))
        }
    }
}
