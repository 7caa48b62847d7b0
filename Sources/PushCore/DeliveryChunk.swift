public import APNsCore

/// One message of `push.deliveries`: up to ``maxTokens`` tokens of a job with the job's shared
/// payload and headers, as the expand stage publishes it and the send stage consumes it.
///
/// A chunk is a ``PushJob`` whose audience is the chunk's tokens, plus the chunk's id and each
/// token's position in the job's sent state. Its JSON is the job's JSON with two more keys,
/// `chunk` and `positions` (see `schemas/push-delivery.schema.json`).
public struct DeliveryChunk: Hashable, Sendable {
    /// The most tokens one chunk carries.
    public static let maxTokens = 1_000

    /// The job; ``PushJob/id`` is set and ``PushJob/audience`` is `.tokens`.
    public let job: PushJob
    /// Names the chunk within its job, stable when the same audience part is expanded again
    /// (`t0`, `t1` for token lists, `s<shard>-<n>` for shard scans).
    public let chunkID: String
    /// The chunk's tokens.
    public let tokens: [DeviceToken]
    /// Each token's position in the job's sent state: its device id (broadcasts, tags,
    /// openids) or its index in the job's token list.
    public let positions: [UInt32]
    /// The tags the job's audience selected by (``Audience/addressedTags``; none for other
    /// audiences): the hour-of-day statistics count the chunk's sends for each.
    public let addressedTags: [String]

    /// The job id (always present on a chunk).
    public var jobID: String { job.id ?? "" }

    /// A chunk of `tokens` of `job`, at `positions`.
    ///
    /// `addressedTags`: those of the job's audience when `nil` (`job` is the job as published).
    ///
    /// - Precondition: `job.id` is set, `tokens` holds 1 to ``maxTokens`` tokens, and
    ///   `positions` one per token.
    public init(job: PushJob, chunkID: String, tokens: [DeviceToken], positions: [UInt32], addressedTags: [String]? = nil) {
        precondition(job.id != nil, "a delivery chunk needs the job's id")
        precondition((1...Self.maxTokens).contains(tokens.count), "a chunk holds 1 to \(Self.maxTokens) tokens")
        precondition(positions.count == tokens.count, "a chunk holds one position per token")
        self.addressedTags = addressedTags ?? job.audience.addressedTags
        var job = job
        job.audience = .tokens(tokens)
        self.job = job
        self.chunkID = chunkID
        self.tokens = tokens
        self.positions = positions
    }

    /// The Kafka key: the job id and the chunk id, so a chunk always lands on the same partition.
    public var messageKey: String { "\(jobID)/\(chunkID)" }
}
