import Foundation
import Hummingbird
import PushConfiguration
import PushCore
import PushJobs
import PushStore

/// `/v1/apps/{app}/jobs/{job}` (status; pause, resume, abort, rate) and `/v1/apps/{app}/receipts`.
enum JobRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.get, "/v1/apps/{app}/jobs/{job}", "getJobStatus", status),
        APIRoute(.post, "/v1/apps/{app}/jobs/{job}/pause", "pauseJob", pause),
        APIRoute(.post, "/v1/apps/{app}/jobs/{job}/resume", "resumeJob", resume),
        APIRoute(.post, "/v1/apps/{app}/jobs/{job}/abort", "abortJob", abort),
        APIRoute(.post, "/v1/apps/{app}/jobs/{job}/cancel", "cancelJob", abort),
        APIRoute(.put, "/v1/apps/{app}/jobs/{job}/rate", "setJobRate", rate),
        APIRoute(.post, "/v1/apps/{app}/receipts", "postReceipt", scope: .device, receipt),
    ]

    static func status(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        try await requireJob(jobID, of: app.id, call.api)
        return APIResponse.json(try await statusJSON(jobID, app: app.id, call.api))
    }

    /// `POST …/pause`, optional body `{"reason": "…"}`: the job stops fleet-wide within a second.
    static func pause(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        let reason = try await optionalReason(&call) ?? "paused through the API"
        try await requireJob(jobID, of: app.id, call.api)
        let at = call.api.clock()
        return try await control(jobID, app: app.id, call.api) { try await $0.pause(jobID: jobID, reason: reason, at: at) }
    }

    /// `POST …/resume`: a paused job goes on; what the pause left undone is sent, nothing twice.
    static func resume(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        try await requireJob(jobID, of: app.id, call.api)
        let at = call.api.clock()
        return try await control(jobID, app: app.id, call.api) { try await $0.resume(jobID: jobID, at: at) }
    }

    /// `POST …/abort` (and `…/cancel`), optional body `{"reason": "…"}`: nothing more of the job
    /// is sent, and its held registry changes are discarded. 409 for a complete job.
    static func abort(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        let reason = try await optionalReason(&call) ?? "aborted through the API"
        try await requireJob(jobID, of: app.id, call.api)
        let report = try await JobReport.load(jobID: jobID, from: call.api.jobs)
        if report.isComplete && report.control.state != .cancelled {
            throw APIError(.conflict, "conflict", "job \(jobID) is complete: nothing is left to abort", field: "job")
        }
        let at = call.api.clock()
        return try await control(jobID, app: app.id, call.api) { try await $0.cancel(jobID: jobID, reason: reason, at: at) }
    }

    /// `PUT …/rate`, body `{"rate-per-second": N}` (N > 0, or null to remove): the job's rate
    /// changes without a restart; it nests inside the app's rate.
    static func rate(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        let body = try await call.jsonObject()
        try APIValidation.onlyKeys(body, ["rate-per-second"])
        let rate: Double?
        switch body["rate-per-second"] {
        case .null?:
            rate = nil
        case .number(let number)?:
            let value = number.doubleValue
            guard value.isFinite, value > 0 else {
                throw APIError.invalid("rate-per-second", "must be a number of notifications per second above 0, or null")
            }
            rate = value
        default:
            throw APIError.invalid("rate-per-second", "is required: a number of notifications per second above 0, or null")
        }
        try await requireJob(jobID, of: app.id, call.api)
        return try await control(jobID, app: app.id, call.api) { try await $0.setRate(jobID: jobID, rate) }
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

    /// Runs an operator's command and answers with the job's status; a command that does not
    /// apply to the job's state is a 409 naming `job`.
    private static func control(
        _ jobID: String, app: String, _ api: APIEnvironment, _ command: (JobOperator) async throws -> JobStore.ControlUpdate
    ) async throws -> Response {
        do {
            _ = try await command(api.jobOperator)
        } catch let refusal as JobControl.Refusal {
            throw APIError(.conflict, refusal.code.rawValue, "job \(jobID): \(refusal.message)", field: "job")
        }
        return APIResponse.json(try await statusJSON(jobID, app: app, api))
    }

    /// The optional `{"reason": "…"}` body of pause and abort (1–200 characters).
    private static func optionalReason(_ call: inout APICall) async throws -> String? {
        guard let body = try await call.optionalJSONObject() else { return nil }
        try APIValidation.onlyKeys(body, ["reason"])
        guard let value = body["reason"] else { return nil }
        guard let reason = value.stringValue, (1...200).contains(reason.count) else {
            throw APIError.invalid("reason", "must be a string of 1 to 200 characters")
        }
        return reason
    }

    /// 404 unless the job is stored and belongs to `app` (another app's job is not found either).
    private static func requireJob(_ jobID: String, of app: String, _ api: APIEnvironment) async throws {
        guard let json = try await api.jobs.spec(jobID: jobID),
              let owner = try? JSONValue(parsing: Data(json)).objectValue?["app"]?.stringValue, owner == app
        else {
            throw APIError.notFound("no job '\(jobID)' of app \(app)", field: "job")
        }
    }

    static func statusJSON(_ jobID: String, app: String, _ api: APIEnvironment) async throws -> JSONValue {
        try await JobReport.load(jobID: jobID, from: api.jobs).json(app: app)
    }
}
