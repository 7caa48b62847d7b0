import Foundation
import Hummingbird
import PushConfiguration
import PushCore
import PushPipeline
import PushStore

/// `/v1/apps/{app}/jobs/{job}` (status, cancel) and `/v1/apps/{app}/receipts`.
enum JobRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.get, "/v1/apps/{app}/jobs/{job}", "getJobStatus", status),
        APIRoute(.post, "/v1/apps/{app}/jobs/{job}/cancel", "cancelJob", cancel),
        APIRoute(.post, "/v1/apps/{app}/receipts", "postReceipt", receipt),
    ]

    static func status(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        try await requireJob(jobID, of: app.id, call.api)
        return APIResponse.json(try await statusJSON(jobID, app: app.id, call.api))
    }

    static func cancel(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        try await requireJob(jobID, of: app.id, call.api)
        let report = JobReport(jobID: jobID, counters: try await call.api.jobs.statistics(jobID: jobID))
        if report.isComplete && !report.cancelRequested {
            throw APIError(.conflict, "conflict", "job \(jobID) is complete: nothing is left to cancel", field: "job")
        }
        try await call.api.jobs.cancel(jobID: jobID, at: call.api.clock())
        return APIResponse.json(try await statusJSON(jobID, app: app.id, call.api))
    }

    static func receipt(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let body = try await call.jsonObject()
        try APIValidation.onlyKeys(body, ["job", "token", "event"])
        let jobID = try APIValidation.jobID(try APIValidation.string(body, "job"), field: "job")
        let token = try APIValidation.token(try APIValidation.string(body, "token"))
        guard let event = ReceiptEvent(rawValue: try APIValidation.string(body, "event")) else {
            throw APIError.invalid("event", "must be delivered or opened")
        }
        try await requireJob(jobID, of: app.id, call.api)
        let counted = try await call.api.jobs.recordReceipt(jobID: jobID, token: token, event: event)
        call.api.metrics.receipt(app: app.id, event: event.rawValue)
        return APIResponse.json(["counted": .bool(counted)])
    }

    // MARK: - Helpers

    /// 404 unless the job is stored and belongs to `app` (another app's job is not found either).
    private static func requireJob(_ jobID: String, of app: String, _ api: APIEnvironment) async throws {
        guard let json = try await api.jobs.spec(jobID: jobID),
              let owner = try? JSONValue(parsing: Data(json)).objectValue?["app"]?.stringValue, owner == app
        else {
            throw APIError.notFound("no job '\(jobID)' of app \(app)", field: "job")
        }
    }

    static func statusJSON(_ jobID: String, app: String, _ api: APIEnvironment) async throws -> JSONValue {
        JobReport(jobID: jobID, counters: try await api.jobs.statistics(jobID: jobID)).json(app: app)
    }
}
