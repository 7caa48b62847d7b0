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
    /// Deliveries of online-first jobs to the devices connected to a gateway, as delivery
    /// chunks. Key: the gateway's id; every gateway reads the topic and keeps its own key's.
    public static let online = "push.online"

    public static let all = [jobs, deliveries, feedback, deadLetters, online]
}
