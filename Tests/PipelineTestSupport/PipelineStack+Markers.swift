import APNsCore
import APNsSimulator
import Foundation
import PushCore
import PushJobs

extension PipelineStack {
    /// Tokens of the marker jobs (``requestsAfterMarkerJob()``), apart from every campaign's.
    package static func markerToken(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "ef", count: 24) + String(format: "%016x", n))
    }

    /// Requests the simulator got for everything but marker jobs, once a small marker job sent
    /// through the running workers finished.
    package func requestsAfterMarkerJob() async throws -> Int {
        let marker = "marker-\(UUID().uuidString.prefix(8))"
        let job = PushJob(
            id: marker, app: Self.app, environment: .sandbox, audience: .tokens((0..<10).map(Self.markerToken)),
            notification: APNsPayload(["aps": ["alert": "marker"]]), headers: PushHeaders(pushType: .alert))
        try await publish(job)
        _ = try await eventually("marker job \(marker) to finish") {
            try await report(marker)
        } until: {
            $0.isComplete
        }
        return try await simulator.counters().requests - (try await markerRequests)
    }

    /// Requests marker jobs made to the (sandbox) simulator so far.
    package var markerRequests: Int {
        get async throws {
            let counters = try await simulator.counters()
            return (0..<10).reduce(0) { $0 + (counters.acceptedPerToken[Self.markerToken($1).hex] ?? 0) }
        }
    }
}
