import HTTPTypes
import Hummingbird
import Kafka
import Logging
import PushConfiguration
import PushCore
import PushStore
import Redis
import Tracing

/// Answers every request: the console's files, then the API's router (``APIRouter``), built once
/// from ``APIRoutes/all``. 404 for an unknown path and 405 (with `Allow`) for a known path with
/// another method, both with the JSON error body; handler errors become their JSON answers
/// (``APIError``, registry input errors as 400), and Kafka or Redis being away becomes 503.
/// Nothing a client sends makes it answer 500.
struct APIResponder: HTTPResponder {
    typealias Context = APIRequestContext
    let api: APIEnvironment
    private let router: RouterResponder<APIRequestContext>

    init(api: APIEnvironment) {
        self.api = api
        router = APIRouter.responder(api: api)
    }

    func respond(to request: Request, context: APIRequestContext) async throws -> Response {
        let start = ContinuousClock.now
        if let page = ConsoleAssets.response(to: request) {
            api.metrics.request(route: ConsoleAssets.root, method: request.method.rawValue, status: page.status.code, duration: .now - start)
            return page
        }
        // The router skips empty segments (`//`, a trailing `/`); no path of the API has one.
        guard !request.uri.path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
            let response = APIRouter.unrouted(request).response
            api.metrics.request(route: "other", method: request.method.rawValue, status: response.status.code, duration: .now - start)
            return response
        }
        return try await router.respond(to: request, context: context)
    }

    /// What `handler` answers, or the JSON answer of what it threw.
    static func answer(api: APIEnvironment, _ handler: () async throws -> Response) async -> Response {
        var error: APIError
        do {
            return try await handler()
        } catch let apiError as APIError {
            error = apiError
        } catch let registryError as StoreError where registryError.code == .busy {
            error = APIError(.serviceUnavailable, registryError.code.rawValue, registryError.message)
        } catch let registryError as StoreError where registryError.code != .unexpectedReply {
            error = APIError(.badRequest, registryError.code.rawValue, registryError.message, field: registryError.field)
        } catch let redisError as RedisClientError {
            api.logger.warning("Redis error while answering", metadata: ["error": "\(redisError)"])
            error = APIError(.serviceUnavailable, "unavailable", "Redis is not answering; retry later")
        } catch let kafkaError as KafkaError {
            api.logger.warning("Kafka error while answering", metadata: ["error": "\(kafkaError)"])
            error = APIError(.serviceUnavailable, "unavailable", "Kafka did not confirm the job; retry later (with the same Idempotency-Key)")
        } catch let other {
            api.logger.error("unexpected error while answering", metadata: ["error": "\(other)"])
            error = APIError(.serviceUnavailable, "unavailable", "the request could not be completed; retry later")
        }
        return error.response
    }
}

/// Reads W3C trace context fields from a request's headers.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}
