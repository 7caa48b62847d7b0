import PushJobs

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

    /// The worker's consumer groups: the partitions it holds
    /// (`pushfleet_kafka_assigned_partitions{group="…"}`) and whether its member takes part in a
    /// rebalance (`pushfleet_kafka_group_rebalancing{group="…"}`), by group; a group not reported
    /// yet is missing.
    package static func groupView(_ body: some Collection<UInt8>) -> WorkerGroupView {
        WorkerGroupView(
            assigned: byGroup(body, metric: "pushfleet_kafka_assigned_partitions").mapValues { Int($0) },
            rebalancing: byGroup(body, metric: "pushfleet_kafka_group_rebalancing").mapValues { $0 != 0 })
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
