/// The error codes of RFC 9113 §7 this codec sends.
package enum HTTP2WireErrorCode: UInt32 {
    case noError = 0x0
    case protocolError = 0x1
    case flowControlError = 0x3
    case frameSizeError = 0x6
    case refusedStream = 0x7
    case cancel = 0x8
    case compressionError = 0x9
}
