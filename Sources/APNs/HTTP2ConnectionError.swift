/// The peer broke the protocol: the connection ends with a GOAWAY carrying `code`.
struct HTTP2ConnectionError: Error, CustomStringConvertible {
    var code: HTTP2WireErrorCode
    var message: String

    var description: String { "HTTP/2 connection error \(code): \(message)" }
}
