/// Traces (`tracing:`): a campaign is one trace, from the API request through `push.jobs`, its
/// shard tasks and chunks, to the APNs batches, feedback and dead letters, exported over OTLP/HTTP.
public struct TracingSettings: Sendable, Equatable {
    /// Where spans go (`otlp-endpoint`): an OTLP/HTTP traces URL, `http://` or `https://`, used
    /// as written (a collector's usually ends in `/v1/traces`); default none, and then no span is
    /// made and no trace context is written.
    public var otlpEndpoint: String?
    /// The share of traces recorded (`sample-rate`), 0...1, decided where a trace starts (head
    /// sampling); a trace context a producer sends is followed as it says. Default 1.
    public var sampleRate: Double

    /// Creates tracing settings; default no endpoint (tracing off) and every trace recorded once on.
    public init(otlpEndpoint: String? = nil, sampleRate: Double = 1) {
        self.otlpEndpoint = otlpEndpoint
        self.sampleRate = sampleRate
    }

    /// Whether spans are made and exported.
    public var enabled: Bool { otlpEndpoint != nil }
}
