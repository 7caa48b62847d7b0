import Foundation
public import PushCore
import Redis

extension JobStore {
    /// A stored job's spec, parsed once: the app it names (nil when it names none) and its JSON
    /// (nil when it is not JSON); nil when the job is unknown or expired.
    package func storedJob(jobID: String) async throws -> (app: String?, json: JSONValue?)? {
        guard let spec = try await spec(jobID: jobID) else { return nil }
        let json = try? JSONValue(parsing: Data(spec))
        return (json.flatMap(Self.app(ofJSON:)), json)
    }

    /// The campaign names the stored specs of `jobIDs` carry (`name`), by job id: one pipeline
    /// of `GET`s. A job without a name, unknown or expired is left out.
    ///
    /// - Throws: ``StoreError`` naming a job id; `RedisClientError`.
    package func names(jobIDs: [String]) async throws -> [String: String] {
        for jobID in jobIDs { try StoreValidation.jobID(jobID) }
        let replies = try await client.checkedPipeline(jobIDs.map { ["GET", .string(JobKeyspace(jobID: $0).spec)] })
        var names: [String: String] = [:]
        for (jobID, reply) in zip(jobIDs, replies) {
            guard let bytes = reply.bytes, let json = try? JSONValue(parsing: Data(bytes)) else { continue }
            names[jobID] = json.objectValue?["name"]?.stringValue
        }
        return names
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
