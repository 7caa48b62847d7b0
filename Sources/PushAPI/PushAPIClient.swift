public import Foundation
public import PushCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A small client of the HTTP API, for the demo and the tests: sends a request with the app's
/// key and returns the status, headers and body (parsed as JSON when it is JSON).
public struct PushAPIClient: Sendable {
    public let baseURL: URL
    public let apiKey: String?

    public init(baseURL: URL, apiKey: String?) {
        self.baseURL = baseURL
        self.apiKey = apiKey
    }

    /// One answer of the API.
    public struct Answer: Sendable {
        public let status: Int
        public let headers: [String: String]
        public let body: Data

        /// The body as JSON, or nil.
        public var json: JSONValue? { try? JSONValue(parsing: body) }

        /// `error.code` of an error body.
        public var errorCode: String? { json?.objectValue?["error"]?.objectValue?["code"]?.stringValue }

        /// `error.field` of an error body.
        public var errorField: String? { json?.objectValue?["error"]?.objectValue?["field"]?.stringValue }

        /// A header, by case-insensitive name.
        public func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    /// Sends `method path` with `body` (JSON) or `rawBody`, the `Authorization: Bearer` key
    /// (`key` overrides the client's; pass `.some(nil)` for none) and extra `headers`.
    public func request(
        _ method: String, _ path: String, json body: JSONValue? = nil, rawBody: Data? = nil,
        headers: [String: String] = [:], key: String?? = nil
    ) async throws -> Answer {
        guard let url = URL(string: path, relativeTo: baseURL) else {
            throw URLError(.badURL)
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = 30
        if let body {
            request.httpBody = body.compactData()
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let rawBody {
            request.httpBody = rawBody
        }
        if let key = key ?? apiKey {
            request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        }
        for (name, value) in headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        let (data, response) = try await Self.session.data(for: request)
        guard let http = response as? HTTPURLResponse else {
            throw URLError(.badServerResponse)
        }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            fields["\(name)"] = "\(value)"
        }
        return Answer(status: http.statusCode, headers: fields, body: data)
    }

    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 8
        return URLSession(configuration: configuration)
    }()
}
