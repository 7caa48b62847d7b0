/// A stream the server reset (RST_STREAM) with an error code other than REFUSED_STREAM.
struct HTTP2StreamReset: Error, CustomStringConvertible {
    var streamID: UInt32
    var errorCode: UInt32

    var description: String { "the server reset stream \(streamID) (HTTP/2 error code \(errorCode))" }
}
