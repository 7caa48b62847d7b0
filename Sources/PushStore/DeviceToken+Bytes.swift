import APNsCore

extension DeviceToken {
    /// The token's binary form (``DeviceToken/bytes``): the registry's bucket hashes and the
    /// receipts key devices by it (`schemas/redis.md`).
    var markerBytes: [UInt8] { bytes }

    /// The token whose binary form is `bytes` (a field of a bucket hash).
    init?(markerBytes bytes: [UInt8]) {
        guard let token = try? DeviceToken(bytes: bytes) else { return nil }
        self = token
    }
}
