import APNs
import APNsCore
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import PushConfiguration
import PushCore
import PushJobs
import PushPipeline
import PushStore

/// `POST /v1/apps/{app}/push`: one endpoint for every audience. The body is a push job
/// (`schemas/push-job.schema.json`) without `id`, and with `app` optional; the server assigns
/// the id, adds `{"pushfleet": {"job": <id>}}` to the payload (for receipts), validates the job
/// as a worker would and answers 202 once Kafka confirmed it. `Idempotency-Key` makes a retry
/// return the same job id without publishing again.
enum PushRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.post, "/v1/apps/{app}/push", "publishPush", push),
        APIRoute(.post, "/v1/apps/{app}/push/check", "checkPush", check),
        APIRoute(.post, "/v1/apps/{app}/push/test", "testPush", test),
    ]

    static let idempotencyKeyHeader = HTTPField.Name("Idempotency-Key")!
    /// The custom payload key that carries the job id to the device.
    static let receiptKey = JobPublisher.receiptKey

    static func push(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let (bytes, value) = try await call.jsonBody()
        let idempotencyKey = call.request.headers[idempotencyKeyHeader]
        let job = try validatedJob(value, app: app, jobID: UUID().uuidString.lowercased(), idempotencyKey: idempotencyKey)
        let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let outcome: JobPublisher.Outcome
        do {
            outcome = try await call.api.publisher.publish(job, digest: digest)
        } catch let error as JobPublisher.JobTooLarge {
            throw APIError(.contentTooLarge, "payload-too-large", error.description, field: "audience")
        }
        switch outcome {
        case .published(let id), .replayed(let id):
            let replayed = if case .replayed = outcome { true } else { false }
            call.api.metrics.published(app: app.id, replayed: replayed)
            let location = "/v1/apps/\(app.id)/jobs/\(id)"
            return APIResponse.json(
                ["job": .string(id), "status": .string(location), "replayed": .bool(replayed)],
                status: .accepted, headers: [.location: location])
        case .conflict(let id):
            throw APIError(
                .conflict, "conflict", "the Idempotency-Key was used for job \(id) with a different request",
                field: "Idempotency-Key")
        }
    }

    /// `POST …/push/check`: validates a job as `POST …/push` would, without publishing it, and
    /// answers the payload the devices get (with the receipt key the server adds, its job id a
    /// placeholder) and its size against APNs's limit for the push type. An invalid job gets the same 400 as `…/push`.
    static func check(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let (_, value) = try await call.jsonBody()
        let job = try validatedJob(value, app: app, jobID: UUID().uuidString.lowercased(), idempotencyKey: nil)
        let payload = job.notification.payloadData()
        return APIResponse.json([
            "valid": true, "audience": .string(job.audience.kind), "push-type": .string(job.headers.pushType.rawValue),
            "payload": try JSONValue(parsing: payload), "payload-bytes": .number(JSONNumber(payload.count)),
            "payload-limit": .number(JSONNumber(job.headers.pushType.maxPayloadBytes)),
        ])
    }

    /// `POST …/push/test`: sends a job's notification at once to the devices its audience names
    /// (`tokens` or `openids`, at most ``TestSender/maxDevices``) and answers APNs's answer for
    /// each; nothing is published or recorded (``TestSender``). A token is sent to in the job's
    /// environment, a user's device in the environment it is registered in.
    static func test(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let (_, value) = try await call.jsonBody()
        let job = try validatedJob(value, app: app, jobID: "test-" + UUID().uuidString.lowercased(), idempotencyKey: nil)
        // The count is checked before any lookup: a job may name 10,000 devices, a test send 10.
        let most = TestSender.maxDevices
        var devices: [(token: DeviceToken, environment: APNsEnvironment)] = []
        switch job.audience {
        case .tokens(let tokens) where tokens.count <= most:
            devices = tokens.map { ($0, job.environment) }
        case .openIDs(let openIDs) where openIDs.count <= most:
            for openID in openIDs {
                guard let device = try await call.api.registry.user(app: job.tokenKind.registry(of: app.id), openID: openID) else {
                    throw APIError.notFound("no device of app \(app.id) is bound to openid '\(openID)'", field: "audience.openids")
                }
                devices.append((device.token, device.environment))
            }
        case .tokens, .openIDs:
            throw APIError.invalid("audience", "a test send reaches at most \(most) devices")
        default:
            throw APIError.invalid("audience", "a test send names its devices: tokens or openids")
        }
        let results: [TestSender.Result]
        do {
            results = try await call.api.testSender.send(job, app: app, to: devices)
        } catch {
            throw APIError(
                .serviceUnavailable, "credential-unavailable", "the credential of app \(app.id) cannot be read: \(error.message)",
                field: error.key)
        }
        return APIResponse.json(["results": .array(results.map(Self.json))])
    }

    /// One device's answer in `…/push/test`.
    static func json(_ result: TestSender.Result) -> JSONValue {
        var answer: JSONObject = [
            "token": .string(result.token.hex), "environment": .string(result.environment.rawValue),
            "accepted": false, "status": .null, "reason": .null, "apns-id": .null, "error": .null,
        ]
        switch result.outcome {
        case .success(let response):
            answer["accepted"] = .bool(response.isSuccess)
            answer["status"] = .number(JSONNumber(response.status))
            answer["reason"] = response.reason.map { .string($0.rawValue) } ?? .null
            answer["apns-id"] = response.apnsID.map(JSONValue.string) ?? .null
        case .failure(let error):
            answer["error"] = .string(error.code.description)
        }
        return .object(answer)
    }

    /// A request body as the job it asks for: checked as `POST …/push` checks it (the server
    /// assigns `id`, `app` is the path's, the receipt key is the server's), then validated as a
    /// worker would. `POST …/push/check` and `…/push/test` take the same body.
    ///
    /// - Throws: ``APIError`` 400 naming the field.
    static func validatedJob(_ value: JSONValue, app: AppSettings, jobID: String, idempotencyKey: String?) throws -> PushJob {
        guard var body = value.objectValue else {
            throw APIError.invalid("body", "the body must be a JSON object (a push job)", code: "invalid-json")
        }
        if let given = body["id"] {
            _ = given
            throw APIError.invalid("id", "the server assigns the job id; leave it out")
        }
        if body["recall"] != nil {
            throw APIError.invalid("recall", "a recall is asked for with POST /v1/apps/\(app.id)/jobs/{job}/recall, not published")
        }
        if let given = body["app"], given != .string(app.id) {
            throw APIError.invalid("app", "must be '\(app.id)', the app of the path, or left out")
        }
        if let idempotencyKey {
            guard !idempotencyKey.isEmpty, idempotencyKey.count <= 128 else {
                throw APIError.invalid("Idempotency-Key", "must be 1 to 128 characters")
            }
            if let given = body["idempotency-key"], given != .string(idempotencyKey) {
                throw APIError.invalid("idempotency-key", "differs from the Idempotency-Key header")
            }
            body["idempotency-key"] = .string(idempotencyKey)
        }
        body["app"] = .string(app.id)
        body["id"] = .string(jobID)
        if case .object(var notification)? = body["notification"] {
            guard notification[receiptKey] == nil else {
                throw APIError.invalid("notification.\(receiptKey)", "is reserved: the server puts the job id there for receipts")
            }
            notification[receiptKey] = ["job": .string(jobID)]
            body["notification"] = .object(notification)
        }
        do {
            let job = try PushJob.decodeAndValidate(from: JSONValue.object(body).compactData())
            try app.check(job)
            return job
        } catch {
            throw APIError(.badRequest, error.code.rawValue, error.message, field: error.field)
        }
    }
}
