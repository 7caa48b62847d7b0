/// Kafka record headers the pipeline sets on its own messages.
public enum PushMessageHeader {
    /// On a `push.jobs` message: this is a shard task of a broadcast or tag job; the value is
    /// the shard number in decimal. The message's value is the job itself.
    public static let shard = "pushfleet-shard"
}
