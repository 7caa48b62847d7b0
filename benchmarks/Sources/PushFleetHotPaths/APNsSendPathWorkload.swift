import APNs
import APNsCore
import Crypto
import Foundation
import NIOCore
import NIOEmbedded
import NIOHPACK
import PushCore
import PushPipeline

/// One notification through the APNs client's send path, without sockets or TLS: the request's
/// header list (``APNsClient``'s), a new `apns-id`, the HTTP/2 codec of ``APNsConnectionHandler``
/// (HPACK, HEADERS + DATA, flow control, stream bookkeeping, the flush) and the answer read back
/// into an ``APNsResponse``. The server's side is a fixed template of HEADERS frames whose stream
/// ids are patched in place, so almost every instruction counted is the client's.
///
/// Run under `valgrind --tool=callgrind` (benchmarks/hotpaths.sh), the same count of
/// notifications gives the same instruction count on every run, whatever else the machine does.
struct APNsSendPathWorkload {
    /// Requests written before the server answers them, as a connection with 100 streams does.
    static let batch = 100

    let count: Int
    /// The `apns-collapse-id` of every request, as a campaign's alerts carry their job's id
    /// (`apns-send-collapse`); `nil` for `apns-send`.
    var collapseID: String? = nil
    /// Whether each request carries its device's own badge (`apns-send-badge`): its payload put
    /// together from the campaign's (``BadgedPayload``), as a campaign with a kept badge sends.
    var keptBadge = false

    /// Runs the workload; returns the number of notifications answered 200.
    func run() throws -> Int {
        let channel = EmbeddedChannel()
        let handler = APNsConnectionHandler(
            events: .init(
                ready: { _, _ in }, maxStreamsChanged: { _ in }, goingAway: { _, _ in }, unresponsive: {}, streamsEnded: { _, _ in }, closed: {}),
            pingInterval: nil, pingTimeout: .seconds(10))
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        try channel.writeInbound(Self.settingsFrame(maxConcurrentStreams: 1_000))
        // Windows large enough for every payload of the run, as a server's WINDOW_UPDATEs give.
        try channel.writeInbound(Self.connectionWindowUpdate(Int(Int32.max) - 65_535))
        channel.embeddedEventLoop.run()
        try Self.discardOutbound(channel)

        let credential = APNsCredential.token(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: "")
        let providerToken = try APNsProviderToken(
            teamID: "TEAM123456", keyID: "KEY1234567", privateKey: P256.Signing.PrivateKey(), issuedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let tokens = try (0..<1_000).map { index in
            try DeviceToken(hex: String(repeating: String(format: "%02x", index % 256), count: 32))
        }
        let payload = ByteBuffer(
            string:
                #"{"aps":{"alert":{"title":"Match day","body":"Kick-off in 10 minutes: tap to follow the game live."},"sound":"default"},"match":"42"}"#
        )
        let badged = keptBadge ? BadgedPayload(Self.notification(badge: ["increment": 1])) : nil
        var generator = SplitMix64(seed: 1)
        var answers = Self.answerTemplate(count: Self.batch)
        var nextStreamID: UInt32 = 1
        let accepted = Counter()

        var sent = 0
        while sent < count {
            let size = min(Self.batch, count - sent)
            for index in 0..<size {
                let request = APNsRequest(
                    credential: credential, environment: .production, deviceToken: tokens[(sent + index) % tokens.count],
                    bundleID: "com.example.app", collapseID: collapseID,
                    payload: badged?.payload(badge: 1 + (sent + index) % 100) ?? payload)
                let apnsID = APNsID.random(using: &generator).uuidString
                let headers = APNsClient.headers(
                    for: request, deviceToken: request.deviceToken, apnsID: apnsID, authority: "api.push.apple.com", providerToken: providerToken)
                let promise = channel.eventLoop.makePromise(of: APNsStreamOutcome.self)
                promise.futureResult.whenSuccess { outcome in
                    guard case .response(let status, let answer, let body) = outcome else { return }
                    let response = APNsClient.response(status: status, headers: answer, body: body, attempts: 1)
                    if response.status == 200 { accepted.value += 1 }
                }
                handler.send(headers: headers, payload: request.payload, timeout: .seconds(10), promise: promise)
            }
            channel.embeddedEventLoop.run()
            try Self.discardOutbound(channel)
            try channel.writeInbound(Self.answers(&answers, firstStreamID: nextStreamID, count: size))
            nextStreamID += UInt32(2 * size)
            sent += size
        }
        return accepted.value
    }

    /// The workload's notification with `aps.badge` (the plain workloads' payload has none).
    static func notification(badge: JSONValue) -> APNsPayload {
        APNsPayload([
            "aps": [
                "alert": ["title": "Match day", "body": "Kick-off in 10 minutes: tap to follow the game live."], "badge": badge, "sound": "default",
            ],
            "match": "42",
        ])
    }

    private final class Counter {
        var value = 0
    }

    private static func discardOutbound(_ channel: EmbeddedChannel) throws {
        while try channel.readOutbound(as: ByteBuffer.self) != nil {}
    }

    private static func settingsFrame(maxConcurrentStreams: UInt32) -> ByteBuffer {
        var frame = ByteBuffer()
        frame.writeBytes([0, 0, 12, 0x4, 0, 0, 0, 0, 0])
        frame.writeInteger(UInt16(0x3))
        frame.writeInteger(maxConcurrentStreams)
        frame.writeInteger(UInt16(0x4))  // SETTINGS_INITIAL_WINDOW_SIZE
        frame.writeInteger(UInt32(1 << 20))
        return frame
    }

    private static func connectionWindowUpdate(_ increment: Int) -> ByteBuffer {
        var frame = ByteBuffer()
        frame.writeBytes([0, 0, 4, 0x8, 0, 0, 0, 0, 0])
        frame.writeInteger(UInt32(increment))
        return frame
    }

    /// The server's answer to one stream: HEADERS (END_HEADERS | END_STREAM) with `:status 200`
    /// (static index 8) and an `apns-id` literal that stays out of the dynamic table.
    private static let answerBlock: [UInt8] = {
        let apnsID = Array("0a1b2c3d-0000-4000-8000-123456789abc".utf8)
        return [0x88, 0x00, 7] + Array("apns-id".utf8) + [UInt8(apnsID.count)] + apnsID
    }()

    private static func answerTemplate(count: Int) -> ByteBuffer {
        var bytes = ByteBuffer()
        for _ in 0..<count {
            bytes.writeBytes([0, 0, UInt8(answerBlock.count), 0x1, 0x5, 0, 0, 0, 0])
            bytes.writeBytes(answerBlock)
        }
        return bytes
    }

    /// `count` answers, for the streams from `firstStreamID` on, in the template's storage.
    private static func answers(_ template: inout ByteBuffer, firstStreamID: UInt32, count: Int) -> ByteBuffer {
        let frameSize = 9 + answerBlock.count
        for index in 0..<count {
            template.setInteger(firstStreamID + UInt32(2 * index), at: template.readerIndex + index * frameSize + 5)
        }
        return template.getSlice(at: template.readerIndex, length: count * frameSize)!
    }
}
