/// What one benchmark run measured, written as JSON and Markdown.
struct APNsBenchmarkReport: Codable {
    /// One client at one connection count.
    struct Measurement: Codable {
        var client: String
        var connections: Int
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
    var measurements: [Measurement]
}
