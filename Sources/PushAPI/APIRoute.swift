import HTTPTypes
import Hummingbird
import PushConfiguration

/// One route of the API: method, path pattern in OpenAPI form (`/v1/apps/{app}/devices`), the
/// operation id `schemas/openapi.yaml` names it by, whether it needs an API key and of which
/// scope, and its handler.
/// ``APIRoutes/all`` is the only route table: the server dispatches with it, and a test checks it
/// against the OpenAPI document.
struct APIRoute: Sendable {
    let method: HTTPRequest.Method
    let path: String
    let operationID: String
    /// The least scope of key that may call it: `device` for what an app on a device does
    /// (its registration, its tags, receipts), `all` for the rest.
    let scope: APIKeyScope
    let handler: @Sendable (inout APICall) async throws -> Response

    /// The pattern's segments: literal, or a `{parameter}`.
    let segments: [Segment]

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// Every route but the health routes needs the app's API key.
    var needsAPIKey: Bool { path.hasPrefix("/v1/") }

    /// Whether a request makes a span (tracing on): the app's calls, not probes and scrapes.
    var traced: Bool { needsAPIKey }

    init(
        _ method: HTTPRequest.Method, _ path: String, _ operationID: String, scope: APIKeyScope = .all,
        _ handler: @escaping @Sendable (inout APICall) async throws -> Response
    ) {
        self.method = method
        self.path = path
        self.operationID = operationID
        self.scope = scope
        self.handler = handler
        segments = path.split(separator: "/").map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
    }

    /// The raw (still percent-encoded) parameters when `pathSegments` match the pattern.
    func match(_ pathSegments: [Substring]) -> [String: String]? {
        guard pathSegments.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, pathSegments) {
            switch segment {
            case .literal(let literal):
                guard part == literal else { return nil }
            case .parameter(let name):
                guard !part.isEmpty else { return nil }
                parameters[name] = String(part)
            }
        }
        return parameters
    }
}
