/// The Kafka topics of the pipeline. See DESIGN.md and the schemas in `schemas/`.
public enum PushTopic {
    /// Jobs from producers, and shard tasks from the expand stage. Key: job id.
    public static let jobs = "push.jobs"
    /// Chunks of deliveries. Key: job id and chunk.
    public static let deliveries = "push.deliveries"
    /// Invalid-token events for the feedback worker.
    public static let feedback = "push.feedback"
    /// Anything that could not be processed, with the original bytes and the reason.
    public static let deadLetters = "push.dlq"

    public static let all = [jobs, deliveries, feedback, deadLetters]
}
