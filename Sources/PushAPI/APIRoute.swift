import HTTPTypes
import Hummingbird
import PushConfiguration

/// One route of the API: method, path pattern in OpenAPI form (`/v1/apps/{app}/devices`), the
/// operation id `schemas/openapi.yaml` names it by, whether it needs an API key and of which
/// scope, and its handler.
/// ``APIRoutes/all`` is the only route table: the server's router is built from it
/// (``APIRouter``), and a test checks it against the OpenAPI document.
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

    /// Every route but the health routes needs the app's API key (``APIKeyMiddleware``); those
    /// requests make a span when tracing is on, not probes and scrapes.
    var needsAPIKey: Bool { Self.needsAPIKey(path: path) }

    /// Whether the route of pattern `path` needs the app's API key.
    static func needsAPIKey(path: String) -> Bool { path.hasPrefix("/v1/") }

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

    /// Whether `pathSegments` (still percent-encoded) fit the pattern: for the `Allow` of a 405,
    /// the router dispatches.
    func matches(_ pathSegments: [Substring]) -> Bool {
        guard pathSegments.count == segments.count else { return false }
        for (segment, part) in zip(segments, pathSegments) {
            switch segment {
            case .literal(let literal):
                guard part == literal else { return false }
            case .parameter:
                guard !part.isEmpty else { return false }
            }
        }
        return true
    }
}
