/// What a WebSocket upgrade request asks for: `GET /v1/apps/{app}/connect`, with the connect
/// token in `Authorization: Bearer <token>` or, for clients that cannot set headers (browsers),
/// in the query (`?token=<token>`; base64url and `.` need no escaping). Pure.
public struct GatewayRequest: Sendable, Hashable {
    public var app: String
    /// The connect token presented, if any (the header's wins over the query's).
    public var token: String?

    public init(app: String, token: String?) {
        self.app = app
        self.token = token
    }

    /// The request of `target` (the request line's path and query) and its `Authorization`
    /// header, or `nil` when the path is not a connect path (answered 404).
    public init?(target: String, authorization: String?) {
        let pathEnd = target.firstIndex(of: "?") ?? target.endIndex
        let segments = target[..<pathEnd].split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == 5, segments[0].isEmpty, segments[1] == "v1", segments[2] == "apps", !segments[3].isEmpty,
            segments[4] == "connect"
        else { return nil }
        app = String(segments[3])
        if let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " {
            token = String(authorization.dropFirst(7)).trimmingSpaces
        } else if pathEnd < target.endIndex {
            let query = target[target.index(after: pathEnd)...]
            token =
                query.split(separator: "&").lazy
                .first { $0.hasPrefix("token=") }
                .map { String($0.dropFirst("token=".count)) }
        } else {
            token = nil
        }
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
