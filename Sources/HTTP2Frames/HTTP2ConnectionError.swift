/// The peer broke the protocol: the connection ends with a GOAWAY carrying `code`.
package struct HTTP2ConnectionError: Error, CustomStringConvertible {
    package var code: HTTP2WireErrorCode
    package var message: String

    package init(code: HTTP2WireErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "HTTP/2 connection error \(code): \(message)" }
}
