import HTTPTypes
import Hummingbird
import PushConfiguration
import Tracing

/// The API on Hummingbird's router, built from the route table (``APIRoutes/all``): each route
/// under `/v1/` behind the ``APIKeyMiddleware`` of its scope, the health routes open; around them
/// all, the request's metrics and span (``APIObservationMiddleware``) and the API's JSON answer to
/// what the router does not route (``APIUnroutedMiddleware``).
enum APIRouter {
    static func responder(api: APIEnvironment) -> RouterResponder<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: APIObservationMiddleware(metrics: api.metrics))
        router.add(middleware: APIUnroutedMiddleware())
        // One group per scope, every scope listed: a keyed route is never registered outside one.
        let keyed = Dictionary(
            uniqueKeysWithValues: APIKeyScope.allCases.map { scope in
                (scope, router.group().add(middleware: APIKeyMiddleware(scope: scope, apps: api.apps, keys: api.keys)))
            })
        for route in APIRoutes.all {
            let handler = route.handler
            let endpoint: @Sendable (Request, APIRequestContext) async throws -> Response = { request, context in
                var call = APICall(request: request, parameters: context.parameters, api: api, app: context.app)
                return await APIResponder.answer(api: api) { try await handler(&call) }
            }
            if route.needsAPIKey {
                keyed[route.scope]!.on(RouterPath(route.path), method: route.method, use: endpoint)
            } else {
                router.on(RouterPath(route.path), method: route.method, use: endpoint)
            }
        }
        return router.buildResponder()
    }

    /// The answer to a request no route takes: 405 with `Allow` when its path is a route's with
    /// another method, else 404.
    static func unrouted(_ request: Request) -> APIError {
        let segments = Array(request.uri.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
        let allowed = APIRoutes.all.filter { $0.matches(segments) }.map(\.method)
        guard allowed.isEmpty else {
            return APIError.methodNotAllowed(request.method, allowed: allowed)
        }
        return APIError.notFound("no such route: \(request.method) \(APIValidation.printable(request.uri.path))", field: nil)
    }
}

/// Answers what the router does not route (it throws Hummingbird's 404) with the API's JSON
/// error: ``APIRouter/unrouted(_:)``.
struct APIUnroutedMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return APIRouter.unrouted(request).response
        }
    }
}

/// Counts and times every answer by route (`other` for what no route takes), and gives each
/// request to an app's route (under `/v1/`) a server span, the child of the caller's W3C trace
/// context when it sends one: the root of a campaign's trace (the job published inside carries
/// it on).
struct APIObservationMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    let metrics: APIMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        // The router names the matched route before it calls the route's middleware; nothing
        // when no route matched.
        let route = context.coreContext.endpointPath.value
        let response: Response
        if let route, APIRoute.needsAPIKey(path: route) {
            var parent = ServiceContext.topLevel
            InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: HTTPFieldsExtractor())
            response = try await withSpan("\(request.method.rawValue) \(route)", context: parent, ofKind: .server) { span in
                let response = try await next(request, context)
                if span.isRecording {
                    span.attributes["http.request.method"] = request.method.rawValue
                    span.attributes["http.route"] = route
                    span.attributes["http.response.status_code"] = Int(response.status.code)
                    span.attributes["pushfleet.app"] = context.parameters.get("app") ?? ""
                }
                return response
            }
        } else {
            response = try await next(request, context)
        }
        metrics.request(route: route ?? "other", method: request.method.rawValue, status: response.status.code, duration: .now - start)
        return response
    }
}
