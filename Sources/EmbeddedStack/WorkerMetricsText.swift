/// What a `pushfleet worker`'s `/metrics` (Prometheus text) says about its consumer groups, for
/// the test rigs and benchmarks that run workers on the stack.
public enum WorkerMetricsText {
    /// The partitions the worker holds per consumer group:
    /// `pushfleet_kafka_assigned_partitions{group="…"}`.
    public static func assignedPartitions(_ body: some Collection<UInt8>) -> [String: Int] {
        let prefix = #"pushfleet_kafka_assigned_partitions{group=""#
        var assigned: [String: Int] = [:]
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
            let rest = line.dropFirst(prefix.count)
            guard let quote = rest.firstIndex(of: "\""), let value = Double(rest.split(separator: " ").last ?? "") else { continue }
            assigned[String(rest[..<quote])] = Int(value)
        }
        return assigned
    }
}
