import AsyncHTTPClient
import FlowControl
import Foundation
import NIOCore
import NIOHTTP1

/// The benchmarks' HTTP requests: health checks, workers' `/metrics`, `apns-sim`'s control port
/// and the registry write load. On AsyncHTTPClient, like `PushAPIClient`: Foundation's
/// URLSession on Linux now and then stalls a request until its timeout while many run at once
/// (swift-corelibs-foundation#3287).
enum BenchmarkHTTP {
    /// What a server answered.
    struct Answer: Sendable {
        var status: Int
        var body: [UInt8]
    }

    /// Sends `method url` with `headers` and `body`, waiting at most `timeout` for the whole answer.
    static func request(
        _ method: HTTPMethod = .GET, _ url: URL, headers: [(String, String)] = [], body: [UInt8]? = nil, timeout: Duration = .seconds(30)
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        for (name, value) in headers {
            request.headers.add(name: name, value: value)
        }
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(request, timeout: .nanoseconds(timeout.nanoseconds))
        let received = try await response.body.collect(upTo: 64 << 20)
        return Answer(status: Int(response.status.code), body: Array(buffer: received))
    }

    /// The body `url` answers with a 2xx status.
    ///
    /// - Throws: ``BenchmarkError`` for another status; the client's error when nothing came.
    static func get(_ url: URL) async throws -> [UInt8] {
        let answer = try await request(.GET, url)
        guard (200..<300).contains(answer.status) else {
            throw BenchmarkError.failed("GET \(url) answered \(answer.status): \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
        }
        return answer.body
    }

    private static let client = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
}
