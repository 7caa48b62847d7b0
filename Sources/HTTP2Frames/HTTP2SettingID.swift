/// The settings of RFC 9113 §6.5.2 this codec reads or sends.
package enum HTTP2SettingID: UInt16 {
    case headerTableSize = 0x1
    case enablePush = 0x2
    case maxConcurrentStreams = 0x3
    case initialWindowSize = 0x4
    case maxFrameSize = 0x5
    case maxHeaderListSize = 0x6
}
