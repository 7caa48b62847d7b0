import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import PushCore

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
    /// (`key` overrides the client's; pass `.some(nil)` for none) and extra `headers`. Redirects
    /// are answered, not followed: the caller sees what the API said.
    public func request(
        _ method: String, _ path: String, json body: JSONValue? = nil, rawBody: Data? = nil,
        headers: [String: String] = [:], key: String?? = nil
    ) async throws -> Answer {
        guard let url = URL(string: path, relativeTo: baseURL) else {
            throw URLError(.badURL)
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = HTTPMethod(rawValue: method)
        if let body {
            request.body = .bytes(ByteBuffer(data: body.compactData()))
            request.headers.add(name: "Content-Type", value: "application/json")
        } else if let rawBody {
            request.body = .bytes(ByteBuffer(data: rawBody))
        }
        if let key = key ?? apiKey {
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
        }
        for (name, value) in headers {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        let response: HTTPClientResponse
        let received: ByteBuffer
        do {
            response = try await Self.client.execute(request, timeout: Self.timeout)
            received = try await response.body.collect(upTo: Self.maxBodyBytes)
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            throw TimedOut(method: method, path: path, after: Self.timeout)
        }
        var fields: [String: String] = [:]
        for (name, value) in response.headers {
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        return Answer(status: Int(response.status.code), headers: fields, body: Data(buffer: received))
    }

    /// How long a request may take, its answer's body included.
    static let timeout = TimeAmount.seconds(30)

    /// A request whose answer did not arrive within ``timeout``: names the request, which the
    /// HTTP client's own error does not.
    public struct TimedOut: Error, CustomStringConvertible {
        public let method: String
        public let path: String
        let after: TimeAmount

        public var description: String {
            "\(method) \(path) got no complete answer within \(after.nanoseconds / 1_000_000_000) s"
        }
    }

    /// The largest answer read (a device export of a large app is the biggest).
    static let maxBodyBytes = 1 << 30

    /// One client for every instance, on NIO's shared event loops, with its own pool per host and
    /// port. Foundation's URLSession on Linux was not used: its requests now and then stalled
    /// until their timeout while many ran at once in one process (the test run).
    private static let client = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
}
