import APNsCore
import Foundation
import PushCore

/// One message of `push.deliveries` as the expand stage writes it (``DeliveryChunk/jsonData()``)
/// and the send stage reads it (``DeliveryChunk/decodeAndValidate(from:)``): a chunk of 1,000
/// tokens with their positions and a campaign's notification. One item is one chunk.
struct DeliveryChunkWorkload {
    static let tokensPerChunk = 1_000

    let count: Int

    /// A realistic chunk: 32-byte tokens, device ids as positions, an alert with a custom key,
    /// a collapse id and a throttle override.
    static func chunk() throws -> DeliveryChunk {
        let tokens = try (0..<tokensPerChunk).map { index in
            try DeviceToken(hex: String(format: "%08x", index * 2_654_435_761 % 4_294_967_291) + String(repeating: "5a", count: 28))
        }
        let job = try PushJob.decodeAndValidate(
            from: Data(
                #"""
                {"id":"campaign-2026-11-25-match-42","app":"news","environment":"production","audience":{"broadcast":true},
                 "notification":{"aps":{"alert":{"title":"Goal!","body":"2-1 in the 89th minute: tap to follow the game live."},"sound":"default"},"match":"42"},
                 "headers":{"push-type":"alert","priority":10,"collapse-id":"match-42"},"throttle":{"sleep-after":1000,"sleep-ms":50}}
                """#.utf8))
        return DeliveryChunk(job: job, chunkID: "s3-17", tokens: tokens, positions: (0..<UInt32(tokensPerChunk)).map { $0 * 64 + 3 })
    }

    /// Writes `count` chunks; returns their total size in bytes.
    func encode() throws -> Int {
        let chunk = try Self.chunk()
        var bytes = 0
        for _ in 0..<count {
            bytes += chunk.jsonData().count
        }
        return bytes
    }

    /// Reads `count` chunks; returns the tokens read.
    func decode() throws -> Int {
        let data = try Self.chunk().jsonData()
        var tokens = 0
        for _ in 0..<count {
            tokens += try DeliveryChunk.decodeAndValidate(from: data).tokens.count
        }
        return tokens
    }
}
