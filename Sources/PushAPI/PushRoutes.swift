import Crypto
import Foundation
import Hummingbird
import HTTPTypes
import PushConfiguration
import PushCore
import PushJobs

/// `POST /v1/apps/{app}/push`: one endpoint for every audience. The body is a push job
/// (`schemas/push-job.schema.json`) without `id`, and with `app` optional; the server assigns
/// the id, adds `{"pushfleet": {"job": <id>}}` to the payload (for receipts), validates the job
/// as a worker would and answers 202 once Kafka confirmed it. `Idempotency-Key` makes a retry
/// return the same job id without publishing again.
enum PushRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.post, "/v1/apps/{app}/push", "publishPush", push),
    ]

    static let idempotencyKeyHeader = HTTPField.Name("Idempotency-Key")!
    /// The custom payload key that carries the job id to the device.
    static let receiptKey = JobPublisher.receiptKey

    static func push(_ call: inout APICall) async throws -> Response {
        let app = try call.authorizedApp()
        let (bytes, value) = try await call.jsonBody()
        guard var body = value.objectValue else {
            throw APIError.invalid("body", "the body must be a JSON object (a push job)", code: "invalid-json")
        }
        if let given = body["id"] {
            _ = given
            throw APIError.invalid("id", "the server assigns the job id; leave it out")
        }
        if let given = body["app"], given != .string(app.id) {
            throw APIError.invalid("app", "must be '\(app.id)', the app of the path, or left out")
        }
        let idempotencyKey = call.request.headers[idempotencyKeyHeader]
        if let idempotencyKey {
            guard !idempotencyKey.isEmpty, idempotencyKey.count <= 128 else {
                throw APIError.invalid("Idempotency-Key", "must be 1 to 128 characters")
            }
            if let given = body["idempotency-key"], given != .string(idempotencyKey) {
                throw APIError.invalid("idempotency-key", "differs from the Idempotency-Key header")
            }
            body["idempotency-key"] = .string(idempotencyKey)
        }
        let jobID = UUID().uuidString.lowercased()
        body["app"] = .string(app.id)
        body["id"] = .string(jobID)
        if case .object(var notification)? = body["notification"] {
            guard notification[receiptKey] == nil else {
                throw APIError.invalid("notification.\(receiptKey)", "is reserved: the server puts the job id there for receipts")
            }
            notification[receiptKey] = ["job": .string(jobID)]
            body["notification"] = .object(notification)
        }
        let job: PushJob
        do {
            job = try PushJob.decodeAndValidate(from: JSONValue.object(body).compactData())
            try app.check(job)
        } catch {
            throw APIError(.badRequest, error.code.rawValue, error.message, field: error.field)
        }
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
}
