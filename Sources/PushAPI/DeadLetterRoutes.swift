import Foundation
import Hummingbird
import PushConfiguration
import PushCore
import PushJobs
import PushStore

/// `GET /v1/apps/{app}/jobs/{job}/dead-letters` and `GET /v1/apps/{app}/dead-letters`: the
/// newest dead letters of a job's notifications, and those of the app's messages that could
/// not be processed (``DeadLetterLog``; `push.dlq` has every one), newest first.
enum DeadLetterRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.get, "/v1/apps/{app}/jobs/{job}/dead-letters", "listJobDeadLetters", job),
        APIRoute(.get, "/v1/apps/{app}/dead-letters", "listAppDeadLetters", app),
    ]

    /// The most letters one answer lists: all a job or app keeps.
    static let maxLimit = DeadLetterLog.maxLetters

    /// `GET …/jobs/{job}/dead-letters?limit=N`: `{"job", "total", "letters"}`, `total` being the
    /// job's `dead-lettered` counter (as its status reports it).
    static func job(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        let limit = try call.limit(default: 100, max: maxLimit)
        try await JobRoutes.requireJob(jobID, of: app.id, call.api)
        let letters = try await call.api.deadLetters.letters(jobID: jobID, limit: limit)
        let report = try await JobReport.load(jobID: jobID, from: call.api.jobs)
        return APIResponse.json([
            "job": .string(jobID), "total": JSONValue(report.deadLettered), "letters": try json(letters),
        ])
    }

    /// `GET …/dead-letters?limit=N`: `{"app", "letters"}`.
    static func app(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let limit = try call.limit(default: 100, max: maxLimit)
        let letters = try await call.api.deadLetters.letters(app: app.id, limit: limit)
        return APIResponse.json(["app": .string(app.id), "letters": try json(letters)])
    }

    /// The letters as `push.dlq` carries them (`schemas/push-dlq.schema.json`).
    private static func json(_ letters: [DeadLetter]) throws -> JSONValue {
        .array(try letters.map { try JSONValue(parsing: $0.jsonData()) })
    }
}
