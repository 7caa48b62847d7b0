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
        byGroup(body, metric: "pushfleet_kafka_assigned_partitions").mapValues { Int($0) }
    }

    /// Whether the worker's member of each consumer group takes part in a rebalance:
    /// `pushfleet_kafka_group_rebalancing{group="…"}`; a group not reported yet is missing.
    public static func groupRebalancing(_ body: some Collection<UInt8>) -> [String: Bool] {
        byGroup(body, metric: "pushfleet_kafka_group_rebalancing").mapValues { $0 != 0 }
    }

    /// The value of `metric`'s series by their one label, `group`.
    private static func byGroup(_ body: some Collection<UInt8>, metric: String) -> [String: Double] {
        let prefix = metric + #"{group=""#
        var values: [String: Double] = [:]
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
            let rest = line.dropFirst(prefix.count)
            guard let quote = rest.firstIndex(of: "\""), let value = Double(rest.split(separator: " ").last ?? "") else { continue }
            values[String(rest[..<quote])] = value
        }
        return values
    }
}
