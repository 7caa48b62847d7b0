import Foundation
public import PushCore

extension JobStore {
    /// A stored job's owner and content, its spec read and parsed once: the app the spec names
    /// (nil when it names none) and the job (nil when the spec is no longer readable as one);
    /// nil when the job is unknown or expired.
    package func storedJob(jobID: String) async throws -> (app: String?, job: PushJob?)? {
        guard let spec = try await spec(jobID: jobID) else { return nil }
        let json = try? JSONValue(parsing: Data(spec))
        return (json?.objectValue?["app"]?.stringValue, json.flatMap { try? PushJob(json: $0) })
    }

    /// The `app` a job's spec (its JSON) names, or nil.
    package static func app(ofSpec spec: [UInt8]) -> String? {
        (try? JSONValue(parsing: Data(spec)))?.objectValue?["app"]?.stringValue
    }
}
