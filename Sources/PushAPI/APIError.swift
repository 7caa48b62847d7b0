import HTTPTypes
import Hummingbird
import NIOCore
import PushCore

/// An answer that is not a success: its status and the JSON body every client error carries,
/// `{"error": {"code", "message", "field"}}`, with the field at fault when there is one.
struct APIError: Error, HTTPResponseError {
    let status: HTTPResponse.Status
    let code: String
    let message: String
    let field: String?
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
    }

    static func invalid(_ field: String, _ message: String, code: String = "invalid-field") -> APIError {
        APIError(.badRequest, code, message, field: field)
    }

    static func notFound(_ what: String, field: String?) -> APIError {
        APIError(.notFound, "not-found", what, field: field)
    }

    /// The body: `{"error": {"code", "message", "field"}}`.
    var body: JSONValue {
        ["error": ["code": .string(code), "message": .string(message), "field": field.map { .string($0) } ?? .null]]
    }

    /// 405 for `method` on a path that answers only `allowed`, with `Allow`.
    static func methodNotAllowed(_ method: HTTPRequest.Method, allowed: [HTTPRequest.Method]) -> APIError {
        let names = allowed.map(\.rawValue).joined(separator: ", ")
        var error = APIError(.methodNotAllowed, "method-not-allowed", "\(method) is not allowed here; use \(names)")
        error.headers[.allow] = names
        return error
    }

    /// The answer: the JSON body with the status and headers.
    var response: Response {
        var response = APIResponse.json(body, status: status)
        for field in headers {
            response.headers.append(field)
        }
        return response
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        response
    }
}
