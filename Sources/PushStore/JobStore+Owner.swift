import Foundation
import PushCore

extension JobStore {
    /// The app a stored job belongs to, as its spec names it; nil when the job is unknown (or
    /// expired) or its spec names none.
    package func owningApp(jobID: String) async throws -> String? {
        try await spec(jobID: jobID).flatMap(Self.app(ofSpec:))
    }

    /// The `app` a job's spec (its JSON) names, or nil.
    package static func app(ofSpec spec: [UInt8]) -> String? {
        (try? JSONValue(parsing: Data(spec)))?.objectValue?["app"]?.stringValue
    }
}
