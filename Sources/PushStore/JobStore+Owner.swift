import Foundation
public import PushCore

extension JobStore {
    /// A stored job's spec, parsed once: the app it names (nil when it names none) and its JSON
    /// (nil when it is not JSON); nil when the job is unknown or expired.
    package func storedJob(jobID: String) async throws -> (app: String?, json: JSONValue?)? {
        guard let spec = try await spec(jobID: jobID) else { return nil }
        let json = try? JSONValue(parsing: Data(spec))
        return (json.flatMap(Self.app(ofJSON:)), json)
    }

    /// The campaign's name a stored job's spec carries (`name`); nil without one, or when the
    /// job is unknown or expired.
    package func name(jobID: String) async throws -> String? {
        try await storedJob(jobID: jobID)?.json?.objectValue?["name"]?.stringValue
    }

    /// The `app` a job's spec (its JSON) names, or nil.
    package static func app(ofSpec spec: [UInt8]) -> String? {
        (try? JSONValue(parsing: Data(spec))).flatMap(app(ofJSON:))
    }

    /// The `app` a job's parsed spec names, or nil.
    static func app(ofJSON json: JSONValue) -> String? {
        json.objectValue?["app"]?.stringValue
    }
}
