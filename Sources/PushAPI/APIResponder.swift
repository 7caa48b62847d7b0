import HTTPTypes
import Hummingbird
import Kafka
import Logging
import PushConfiguration
import PushCore
import PushStore
import Redis
import Tracing

/// Answers every request from ``APIRoutes/all``: 404 for an unknown path and 405 (with `Allow`)
/// for a known path with another method, both with the JSON error body; handler errors become
/// their JSON answers (``APIError``, registry input errors as 400), and Kafka or Redis being
/// away becomes 503. Nothing a client sends makes it answer 500.
struct APIResponder: HTTPResponder {
    typealias Context = BasicRequestContext
    let api: APIEnvironment

    func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
        let start = ContinuousClock.now
        if let page = ConsoleAssets.response(to: request) {
            api.metrics.request(route: ConsoleAssets.root, method: request.method.rawValue, status: page.status.code, duration: .now - start)
            return page
        }
        let pathSegments = request.uri.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var matched: (APIRoute, [String: String])?
        var allowed: [HTTPRequest.Method] = []
        for route in APIRoutes.all {
            guard let parameters = route.match(Array(pathSegments)) else { continue }
            if route.method == request.method {
                matched = (route, parameters)
                break
            }
            allowed.append(route.method)
        }
        let response: Response
        let routeLabel: String
        if let (route, parameters) = matched {
            routeLabel = route.path
            let handle = {
                var call = APICall(request: request, parameters: parameters, api: api, scope: route.scope)
                return await answer { try await route.handler(&call) }
            }
            if route.traced {
                // A server span, the child of the caller's W3C trace context when it sends one:
                // the root of a campaign's trace (the job published inside carries it on).
                var parent = ServiceContext.topLevel
                InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: HTTPFieldsExtractor())
                response = await withSpan("\(request.method.rawValue) \(route.path)", context: parent, ofKind: .server) { span in
                    let response = await handle()
                    if span.isRecording {
                        span.attributes["http.request.method"] = request.method.rawValue
                        span.attributes["http.route"] = route.path
                        span.attributes["http.response.status_code"] = Int(response.status.code)
                        span.attributes["pushfleet.app"] = parameters["app"] ?? ""
                    }
                    return response
                }
            } else {
                response = await handle()
            }
        } else if !allowed.isEmpty {
            routeLabel = "other"
            response = APIError.methodNotAllowed(request.method, allowed: allowed).response
        } else {
            routeLabel = "other"
            response = APIError.notFound("no such route: \(request.method) \(APIValidation.printable(request.uri.path))", field: nil).response
        }
        api.metrics.request(route: routeLabel, method: request.method.rawValue, status: response.status.code, duration: .now - start)
        return response
    }

    private func answer(_ handler: () async throws -> Response) async -> Response {
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
