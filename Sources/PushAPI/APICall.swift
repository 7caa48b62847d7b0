import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PushConfiguration
import PushCore

/// One request being answered: the request, its route's path parameters, the app whose key it
/// holds (``APIKeyMiddleware``) and the server's environment, with the checks every handler
/// shares (parameters, JSON body).
struct APICall {
    var request: Request
    /// The route's path parameters, still percent-encoded.
    let parameters: Parameters
    let api: APIEnvironment
    private let authorizedApp: AppSettings?

    init(request: Request, parameters: Parameters, api: APIEnvironment, app: AppSettings?) {
        self.request = request
        self.parameters = parameters
        self.api = api
        self.authorizedApp = app
    }

    /// The app named by the path, whose key the request holds: every route under `/v1/` is
    /// behind ``APIKeyMiddleware``.
    var app: AppSettings {
        guard let authorizedApp else {
            preconditionFailure("a route without an API key has no app")
        }
        return authorizedApp
    }

    /// A path parameter, percent-decoded.
    ///
    /// - Throws: ``APIError`` 400 naming the parameter when it is not valid percent-encoding.
    func parameter(_ name: String) throws(APIError) -> String {
        guard let raw = parameters.get(name) else {
            preconditionFailure("route without parameter \(name)")
        }
        return try Self.decoded(raw, name: name)
    }

    /// `raw`, a path parameter as sent, percent-decoded.
    ///
    /// - Throws: ``APIError`` 400 naming the parameter when it is not valid percent-encoding.
    static func decoded(_ raw: String, name: String) throws(APIError) -> String {
        guard raw.contains("%") else { return raw }
        guard let decoded = raw.removingPercentEncoding else {
            throw APIError.invalid(name, "is not valid percent-encoded UTF-8")
        }
        return decoded
    }

    /// A query parameter, percent-decoded; `nil` when absent.
    func query(_ name: String) throws -> String? {
        guard let raw = request.uri.queryParameters[Substring(name)] else { return nil }
        return String(raw)
    }

    /// The `limit` query parameter: a whole number from 1 to `max`; `fallback` when absent.
    ///
    /// - Throws: ``APIError`` 400 naming `limit`.
    func limit(default fallback: Int, max: Int) throws -> Int {
        try wholeNumber("limit", default: fallback, in: 1...max)
    }

    /// The query parameter `name`: a whole number within `range`; `fallback` when absent.
    ///
    /// - Throws: ``APIError`` 400 naming the parameter.
    func wholeNumber(_ name: String, default fallback: Int, in range: ClosedRange<Int>) throws -> Int {
        try query(name).map { text -> Int in
            guard let value = Int(text), range.contains(value) else {
                throw APIError.invalid(name, "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        } ?? fallback
    }

    /// The request body, at most `api.max-body-bytes` (413 beyond), as JSON (415 when another
    /// content type is declared).
    mutating func jsonBody() async throws -> (bytes: [UInt8], value: JSONValue) {
        guard let body = try await optionalJSONBody() else {
            throw APIError.invalid("body", "a JSON body is required", code: "invalid-json")
        }
        return body
    }

    /// The request body as a JSON object, or `nil` when the request has no body.
    mutating func optionalJSONObject() async throws -> JSONObject? {
        guard let body = try await optionalJSONBody() else { return nil }
        guard let object = body.value.objectValue else {
            throw APIError.invalid("body", "the body must be a JSON object", code: "invalid-json")
        }
        return object
    }

    /// The request body as JSON, or `nil` when it is empty.
    private mutating func optionalJSONBody() async throws -> (bytes: [UInt8], value: JSONValue)? {
        if let type = request.headers[.contentType], !type.lowercased().hasPrefix("application/json") {
            throw APIError(.unsupportedMediaType, "unsupported-media-type", "the body must be application/json", field: "Content-Type")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: api.maxBodyBytes)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, "payload-too-large", "the body is larger than \(api.maxBodyBytes) bytes", field: nil)
        }
        let bytes = Array(buffer.readableBytesView)
        guard !bytes.isEmpty else { return nil }
        do {
            return (bytes, try JSONValue(parsing: Data(bytes)))
        } catch {
            throw APIError.invalid("body", "the body is not valid JSON: \(error)", code: "invalid-json")
        }
    }

    /// The body as a JSON object.
    mutating func jsonObject() async throws -> JSONObject {
        guard let object = try await jsonBody().value.objectValue else {
            throw APIError.invalid("body", "the body must be a JSON object", code: "invalid-json")
        }
        return object
    }
}

extension APIError {
    /// Adds `WWW-Authenticate: Bearer` (RFC 6750) to a 401.
    func withChallenge() -> APIError {
        var error = self
        error.headers[.wwwAuthenticate] = "Bearer"
        return error
    }
}
