import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// The campaign console (`/console/`): a page, a style sheet and a script, compiled into the
/// binary from `Sources/PushAPI/Console`. The page holds no data and no key: it signs in with an
/// app's API key kept in the browser's session storage and calls the public API with it, so
/// everything it shows is scriptable too (docs/console.md).
enum ConsoleAssets {
    struct Asset: Sendable {
        let bytes: [UInt8]
        let contentType: String
        let etag: String

        init(_ bytes: [UInt8], _ contentType: String) {
            self.bytes = bytes
            self.contentType = contentType
            etag = "\"" + SHA256.hash(data: bytes).prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
        }
    }

    static let root = "/console"

    static let assets: [String: Asset] = [
        "/console/": Asset(PackageResources.index_html, "text/html; charset=utf-8"),
        "/console/console.css": Asset(PackageResources.console_css, "text/css; charset=utf-8"),
        "/console/console.js": Asset(PackageResources.console_js, "text/javascript; charset=utf-8"),
    ]

    /// Only the console's own files run, and the page talks to this server only; it cannot be
    /// framed.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

    /// The answer for a path under ``root``, or `nil` for any other path.
    static func response(to request: Request) -> Response? {
        let path = request.uri.path
        guard path == root || path.hasPrefix(root + "/") else { return nil }
        guard request.method == .get || request.method == .head else {
            return APIError.methodNotAllowed(request.method, allowed: [.get, .head]).response
        }
        if path == root {
            return Response(status: .permanentRedirect, headers: [.location: root + "/"])
        }
        guard let asset = assets[path] else {
            return APIError.notFound("no such page: \(APIValidation.printable(path))", field: nil).response
        }
        var headers: HTTPFields = [
            .contentType: asset.contentType, .cacheControl: "no-cache", .eTag: asset.etag,
            .contentSecurityPolicy: contentSecurityPolicy, .xContentTypeOptions: "nosniff",
            HTTPField.Name("Referrer-Policy")!: "no-referrer",
        ]
        if request.headers[.ifNoneMatch] == asset.etag {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentLength] = String(asset.bytes.count)
        let body = request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: asset.bytes))
        return Response(status: .ok, headers: headers, body: body)
    }
}
