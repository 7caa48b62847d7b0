import APNsCore
import Foundation
import Hummingbird
import PushConfiguration
import PushCore
import PushJobs
import PushStore

/// `/v1/apps/{app}/jobs/{job}` (status; pause, resume, abort, rate, recall) and `/v1/apps/{app}/receipts`.
enum JobRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.get, "/v1/apps/{app}/jobs/{job}", "getJobStatus", status),
        APIRoute(.post, "/v1/apps/{app}/jobs/{job}/pause", "pauseJob", pause),
        APIRoute(.post, "/v1/apps/{app}/jobs/{job}/resume", "resumeJob", resume),
        APIRoute(.post, "/v1/apps/{app}/jobs/{job}/abort", "abortJob", abort),
        APIRoute(.post, "/v1/apps/{app}/jobs/{job}/cancel", "cancelJob", abort),
        APIRoute(.put, "/v1/apps/{app}/jobs/{job}/rate", "setJobRate", rate),
        APIRoute(.post, "/v1/apps/{app}/jobs/{job}/recall", "recallJob", recall),
        APIRoute(.post, "/v1/apps/{app}/receipts", "postReceipt", scope: .device, receipt),
    ]

    static func status(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        try await requireJob(jobID, of: app.id, call.api)
        return APIResponse.json(try await statusJSON(jobID, app: app.id, call.api))
    }

    /// `POST …/pause`, optional body `{"reason": "…"}`: the job stops fleet-wide within a second.
    static func pause(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        let reason = try await optionalReason(&call) ?? "paused through the API"
        try await requireJob(jobID, of: app.id, call.api)
        let at = call.api.clock()
        return try await control(jobID, app: app.id, call.api) { try await $0.pause(jobID: jobID, reason: reason, at: at) }
    }

    /// `POST …/resume`: a paused job goes on; what the pause left undone is sent, nothing twice.
    static func resume(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        try await requireJob(jobID, of: app.id, call.api)
        let at = call.api.clock()
        return try await control(jobID, app: app.id, call.api) { try await $0.resume(jobID: jobID, at: at) }
    }

    /// `POST …/abort` (and `…/cancel`), optional body `{"reason": "…"}`: nothing more of the job
    /// is sent, and its held registry changes are discarded. 409 for a complete job.
    static func abort(_ call: inout APICall) async throws -> Response {
        let app = call.app
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
        let app = call.app
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

    /// `POST …/recall`, optional body `{"overwrite-with": {"notification": {…}, "headers": {…}}}`:
    /// what is not yet sent of the campaign is cancelled, and a recall job goes to every device
    /// that accepted it: a withdraw, or the new content under the campaign's collapse id. 202
    /// with the recall's job id; 409 when the campaign was recalled already or is past the recall
    /// window, or cannot be recalled.
    static func recall(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        let overwrite = try await overwriteContent(&call)
        try await requireJob(jobID, of: app.id, call.api)
        let outcome: JobOperator.RecallOutcome
        do {
            outcome = try await call.api.jobOperator.recall(
                jobID: jobID, overwriteWith: overwrite, at: call.api.clock(), window: call.api.recallWindow)
        } catch let refusal as RecallRefusal {
            if refusal.concernsCampaign { throw APIError(.conflict, refusal.code.rawValue, refusal.message, field: refusal.field) }
            throw APIError.invalid(refusal.field, refusal.message, code: refusal.code.rawValue)
        } catch let already as JobOperator.AlreadyRecalled {
            throw APIError(.conflict, "recalled-already", already.description, field: "job")
        } catch let invalid as JobOperator.InvalidRecall {
            throw APIError.invalid(invalid.field, invalid.error.message, code: invalid.error.code.rawValue)
        } catch let error as JobPublisher.JobTooLarge {
            throw APIError(.contentTooLarge, "payload-too-large", error.description, field: "job")
        }
        let location = "/v1/apps/\(app.id)/jobs/\(outcome.recallID)"
        return APIResponse.json(
            [
                "job": .string(outcome.recallID), "recall-of": .string(jobID), "mode": .string(outcome.mode.rawValue),
                "cancelled": .bool(outcome.cancelled), "status": .string(location),
            ], status: .accepted, headers: [.location: location])
    }

    /// The optional body of `POST …/recall`: `overwrite-with`'s notification and headers.
    private static func overwriteContent(_ call: inout APICall) async throws -> (notification: APNsPayload, headers: PushHeaders?)? {
        guard let body = try await call.optionalJSONObject() else { return nil }
        try APIValidation.onlyKeys(body, ["overwrite-with"])
        guard let value = body["overwrite-with"], value != .null else { return nil }
        guard let content = value.objectValue else {
            throw APIError.invalid("overwrite-with", "must be an object: {\"notification\": {…}, \"headers\": {…}}")
        }
        do {
            return try PushJob.overwriteContent(content, at: "overwrite-with")
        } catch {
            throw APIError.invalid(error.field, error.message, code: error.code.rawValue)
        }
    }

    static func receipt(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let body = try await call.jsonObject()
        try APIValidation.onlyKeys(body, ["job", "token", "event"])
        let jobID = try APIValidation.jobID(try APIValidation.string(body, "job"), field: "job")
        let token = try APIValidation.token(try APIValidation.string(body, "token"))
        guard let event = ReceiptEvent(rawValue: try APIValidation.string(body, "event")) else {
            throw APIError.invalid("event", "must be delivered or opened")
        }
        let spec = try await requireJob(jobID, of: app.id, call.api)
        let counted = try await call.api.jobs.recordReceipt(jobID: jobID, token: token, event: event)
        call.api.metrics.receipt(app: app.id, event: event.rawValue)
        if counted {
            // Into the hour it arrived in, for the app and the tags the job addressed, and into
            // the device's own hours (when it reads) when the job found it in the registry: a
            // listed token may be unknown to it, and nothing is kept for those.
            let targets = spec.map(Audience.receiptTargets(ofJob:)) ?? (tags: [], registeredDevices: false)
            try await call.api.hours.addReceipt(
                HourEvent(event), app: app.id, tags: targets.tags, at: Date(timeIntervalSince1970: Double(call.api.clock()) / 1000),
                in: app.statisticsTimeZone, device: targets.registeredDevices ? token : nil)
        }
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

    /// 404 unless the job is stored and belongs to `app` (another app's job is not found either);
    /// answers the job's spec as JSON.
    @discardableResult
    static func requireJob(_ jobID: String, of app: String, _ api: APIEnvironment) async throws -> JSONValue? {
        guard let stored = try await api.jobs.storedJob(jobID: jobID), stored.app == app else {
            throw APIError.notFound("no job '\(jobID)' of app \(app)", field: "job")
        }
        return stored.json
    }

    static func statusJSON(_ jobID: String, app: String, _ api: APIEnvironment) async throws -> JSONValue {
        try await JobReport.load(jobID: jobID, from: api.jobs).json(app: app)
    }
}

/// `GET /v1/apps/{app}/jobs` (the app's jobs, newest first) and
/// `POST /v1/apps/{app}/audience/estimate` (how many devices an audience reaches).
enum JobListRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.get, "/v1/apps/{app}/jobs", "listJobs", list),
        APIRoute(.get, "/v1/apps/{app}/jobs/{job}/events", "streamJobEvents", events),
        APIRoute(.post, "/v1/apps/{app}/audience/estimate", "estimateAudience", estimate),
    ]

    /// The most jobs one answer lists.
    static let maxLimit = 200

    /// `GET …/jobs?limit=N&state=S&since=MS`: each job's status (as `getJobStatus`) and when it
    /// was first seen (`listed-at`), newest first.
    static func list(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let limit = try call.limit(default: 50, max: maxLimit)
        let since =
            try call.query("since").map { text -> Int64 in
                guard let value = Int64(text), value >= 0 else { throw APIError.invalid("since", "must be milliseconds since 1970") }
                return value
            } ?? 0
        let state = try call.query("state").map { text -> JobState in
            guard let state = JobState(rawValue: text) else {
                throw APIError.invalid("state", "must be one of \(JobState.allCases.map(\.rawValue).sorted().joined(separator: ", "))")
            }
            return state
        }
        // With a state filter, read further back so that `limit` jobs of that state can be found.
        let listed = try await call.api.jobs.index.recent(app: app.id, since: since, limit: state == nil ? limit : JobIndex.maxJobs)
        var jobs: [JSONValue] = []
        for (jobID, at) in listed where jobs.count < limit {
            let report = try await JobReport.load(jobID: jobID, from: call.api.jobs)
            guard state == nil || report.state == state else { continue }
            jobs.append(["listed-at": .number(JSONNumber(Int(at))), "status": report.json(app: app.id)])
        }
        return APIResponse.json(["jobs": .array(jobs)])
    }

    /// How long one event stream lasts at most; the client (an `EventSource`) connects again.
    static let streamLifetime: Duration = .seconds(25)
    /// How often a stream reads the job's counters.
    static let streamInterval: Duration = .seconds(1)

    /// `GET …/jobs/{job}/events`: the job's status as server-sent events (`text/event-stream`),
    /// one `status` event whenever it changes, read every second, while the job is in progress;
    /// then an `end` event when it is complete or cancelled. A job that is not in progress
    /// (queued, scheduled, paused) gets its status and the stream ends, with `retry: 5000`:
    /// an `EventSource` asks again 5 s later. A stream ends after 25 s in any case (proxies
    /// cut longer ones); the `EventSource` reconnects.
    static func events(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let jobID = try APIValidation.jobID(try call.parameter("job"))
        let api = call.api
        try await JobRoutes.requireJob(jobID, of: app.id, api)
        let first = try await JobRoutes.statusJSON(jobID, app: app.id, api)
        let body = ResponseBody { writer in
            var status = first
            var sent: JSONValue?
            let deadline = ContinuousClock.now + streamLifetime
            try await writer.write(ByteBuffer(string: "retry: 5000\n\n"))
            while true {
                let state = status.objectValue?["state"]?.stringValue.flatMap(JobState.init(rawValue:))
                if state == .complete || state == .cancelled {
                    try await writer.write(Self.event("end", status))
                    break
                }
                if status != sent {
                    try await writer.write(Self.event("status", status))
                    sent = status
                }
                guard state == .inProgress, ContinuousClock.now < deadline else { break }
                try await Task.sleep(for: streamInterval)
                status = try await JobRoutes.statusJSON(jobID, app: app.id, api)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }

    /// One server-sent event.
    static func event(_ name: String, _ data: JSONValue) -> ByteBuffer {
        var buffer = ByteBuffer(string: "event: \(name)\ndata: ")
        buffer.writeBytes(data.compactData())
        buffer.writeString("\n\n")
        return buffer
    }

    /// `POST …/audience/estimate` `{"environment", "audience"}`: ``AudienceEstimate``.
    static func estimate(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let body = try await call.jsonObject()
        try APIValidation.onlyKeys(body, ["environment", "audience"])
        let environment = try APIValidation.environment(try APIValidation.string(body, "environment"), of: app)
        let value = try APIValidation.required(body, "audience")
        let audience: Audience
        do {
            audience = try Audience.decodeAndValidate(value)
        } catch {
            throw APIError(.badRequest, error.code.rawValue, error.description, field: error.field)
        }
        let registry = call.api.registry
        let count = try await registry.deviceCount(app: app.id)
        let devices = environment == .sandbox ? count.sandbox : count.production
        var tagCounts: [String: Int] = [:]
        if !audience.addressedTags.isEmpty {
            tagCounts = try await registry.appTags(app: app.id)
        }
        var locatedDevices: Int?
        if case .area(let area, _) = audience {
            locatedDevices = try await registry.locatedDevices(app: app.id, in: area)
        }
        var activityTokens: Int?
        if case .activity(let activity) = audience {
            activityTokens = try await call.api.activityTokens.tokens(
                app: app.id, environment: environment, activity: activity, now: call.api.clock()
            ).count
        }
        let estimate = AudienceEstimate(
            audience, environmentDevices: devices, tagCounts: tagCounts, activityTokens: activityTokens, locatedDevices: locatedDevices)
        return APIResponse.json([
            "audience": .string(audience.kind), "environment": .string(environment.rawValue),
            "devices": estimate.devices.map { JSONValue.number(JSONNumber($0)) } ?? .null, "exact": .bool(estimate.isExact),
        ])
    }
}
