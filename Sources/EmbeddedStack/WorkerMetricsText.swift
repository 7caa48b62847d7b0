/// What a `pushfleet worker`'s (or gateway's) `/metrics` (Prometheus text) says, for the test
/// rigs and benchmarks that run them on the stack.
public enum WorkerMetricsText {
    /// The value of each series whose line starts with one of `prefixes` (name and labels),
    /// summed per prefix.
    public static func values(_ body: some Collection<UInt8>, prefixes: [String]) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") {
            guard let prefix = prefixes.first(where: { line.hasPrefix($0) }), let value = Double(line.split(separator: " ").last ?? "") else {
                continue
            }
            values[prefix, default: 0] += value
        }
        return values
    }

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
