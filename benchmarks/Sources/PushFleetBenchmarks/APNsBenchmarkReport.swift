/// What one benchmark run measured, written as JSON and Markdown.
struct APNsBenchmarkReport: Codable {
    /// One client at one connection count.
    struct Measurement: Codable {
        var client: String
        var connections: Int
        /// The round (1...) in which it was measured; each round runs every client once.
        var round: Int = 1
        var notifications: Int
        var succeeded: Int
        var seconds: Double
        var notificationsPerSecond: Double
        /// CPU seconds of the client process per 100 000 notifications (`null` when unknown).
        var clientCPUSecondsPer100k: Double?
        /// CPU seconds of the simulator per 100 000 notifications during the run.
        var simulatorCPUSecondsPer100k: Double
        var latencyP50Milliseconds: Double?
        var latencyP99Milliseconds: Double?
    }

    var machine: MachineDescription
    var payloadBytes: Int
    var streamsPerConnection: Int
    var rounds: Int = 1
    /// Every client, connection count and round.
    var measurements: [Measurement]

    /// The measurements of one client at one connection count, one per round.
    func measurements(of client: String, connections: Int) -> [Measurement] {
        measurements.filter { $0.client == client && $0.connections == connections }
    }

    /// The round with the median rate of a client at a connection count.
    func median(of client: String, connections: Int) -> Measurement? {
        let sorted = measurements(of: client, connections: connections).sorted { $0.notificationsPerSecond < $1.notificationsPerSecond }
        return sorted.isEmpty ? nil : sorted[sorted.count / 2]
    }

    /// The median over rounds of `client`'s rate divided by `reference`'s in the same round:
    /// both saw the same load on a shared machine.
    func ratio(_ client: String, to reference: String, connections: Int) -> Double? {
        let references = Dictionary(
            measurements(of: reference, connections: connections).map { ($0.round, $0.notificationsPerSecond) },
            uniquingKeysWith: { first, _ in first })
        let ratios = measurements(of: client, connections: connections).compactMap { measurement in
            references[measurement.round].map { measurement.notificationsPerSecond / $0 }
        }.sorted()
        return ratios.isEmpty ? nil : ratios[ratios.count / 2]
    }
}
