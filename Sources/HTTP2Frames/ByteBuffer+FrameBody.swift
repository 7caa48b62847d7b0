import NIOCore

extension Optional where Wrapped == ByteBuffer {
    /// Adds a DATA frame's bytes to a body collected so far (`nil` until the first frame).
    public mutating func appendFrameBytes(_ chunk: ByteBuffer) {
        if self == nil {
            self = chunk
        } else {
            self!.writeImmutableBuffer(chunk)
        }
    }
}
