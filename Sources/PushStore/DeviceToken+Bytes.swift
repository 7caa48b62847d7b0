import APNsCore

extension DeviceToken {
    /// The token's binary form (``DeviceToken/bytes``): the registry's bucket hashes and the
    /// receipts key devices by it (`schemas/redis.md`).
    var markerBytes: [UInt8] { bytes }
}
