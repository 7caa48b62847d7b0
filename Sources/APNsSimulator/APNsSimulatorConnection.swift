import Atomics
import NIOCore
import NIOHTTP2

/// One client connection of the simulator: its authentication state, its open streams and the
/// connection-level faults (GOAWAY, reset). Confined to the channel's event loop.
final class APNsSimulatorConnection {
    let channel: any Channel
    let shared: APNsSimulatorSharedState
    let loopState: APNsSimulatorLoopState
    var authentication = APNsSimulatorConnectionAuthentication()
    /// Whether the full stream limit has been advertised.
    private(set) var advertisesFullStreamLimit: Bool
    private var openStreams = 0
    /// Streams the client has opened on this connection.
    private(set) var streamsOpened = 0
    /// Set once the unresponsive fault fired: nothing is read or answered any more.
    private(set) var isUnresponsive = false
    /// The highest stream id the client has opened: the last stream a GOAWAY promises to serve.
    private(set) var highestStreamID = HTTP2StreamID(0)
    private(set) var isGoingAway = false
    /// Set once the reset fault fired: nothing more is answered on this connection.
    private(set) var isResetting = false
    private var lastActivity = NIODeadline.now()
    private var idleCheck: RepeatedTask?

    init(channel: any Channel, shared: APNsSimulatorSharedState, advertisesFullStreamLimit: Bool) {
        self.channel = channel
        self.shared = shared
        self.loopState = shared.loopState(for: channel.eventLoop)
        self.advertisesFullStreamLimit = advertisesFullStreamLimit
    }

    /// Starts the idle timer, if configured.
    func start() {
        guard let idleTimeout = shared.configuration.idleTimeout else { return }
        let timeout = TimeAmount.nanoseconds(idleTimeout.nanoseconds)
        idleCheck = channel.eventLoop.scheduleRepeatedTask(initialDelay: timeout, delay: timeout) { [self] task in
            guard openStreams == 0, NIODeadline.now() - lastActivity >= timeout else { return }
            task.cancel()
            shared.idleTimeouts.wrappingIncrement(ordering: .relaxed)
            goAway(lastStreamID: .maxID, errorCode: .noError, reason: "IdleTimeout")
        }
        channel.closeFuture.whenComplete { [self] _ in idleCheck?.cancel() }
    }

    func streamOpened(_ streamID: HTTP2StreamID) {
        openStreams += 1
        streamsOpened += 1
        if streamID > highestStreamID { highestStreamID = streamID }
        lastActivity = .now()
    }

    func streamClosed() {
        openStreams -= 1
        lastActivity = .now()
        if isGoingAway, openStreams == 0 {
            closeAfterFlush()
        }
    }

    /// After the first authenticated success, raise `SETTINGS_MAX_CONCURRENT_STREAMS` as Apple does.
    func advertiseFullStreamLimit() {
        guard !advertisesFullStreamLimit else { return }
        advertisesFullStreamLimit = true
        let setting = HTTP2Setting(parameter: .maxConcurrentStreams, value: shared.configuration.maxConcurrentStreams)
        channel.writeAndFlush(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([setting]))), promise: nil)
    }

    /// Sends GOAWAY: streams up to `lastStreamID` are still answered, later ones are refused,
    /// and the connection closes once the answered ones are done. Pass ``highestStreamID`` so
    /// that no stream the server has started is dropped (as APNs does).
    func goAway(lastStreamID: HTTP2StreamID, errorCode: HTTP2ErrorCode, reason: String?) {
        guard !isGoingAway, !isResetting else { return }
        isGoingAway = true
        let debugData = reason.map { ByteBuffer(string: #"{"reason":"\#($0)"}"#) }
        let frame = HTTP2Frame(
            streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: errorCode, opaqueData: debugData))
        channel.writeAndFlush(frame, promise: nil)
        if openStreams == 0 {
            closeAfterFlush()
        }
    }

    /// Stops reading: later frames, PINGs included, stay unread and unanswered, and the
    /// connection stays open until the client closes it.
    func becomeUnresponsive() {
        guard !isUnresponsive else { return }
        isUnresponsive = true
        loopState.unresponsiveConnections += 1
        channel.setOption(.autoRead, value: false).whenFailure { _ in }
    }

    /// Drops the connection without GOAWAY. Everything already written is flushed first, so
    /// answered streams stay answered; the rest get no answer.
    func reset() {
        guard !isResetting else { return }
        isResetting = true
        closeAfterFlush()
    }

    /// Closes once everything written so far has reached the socket: a PING rides behind it
    /// (a plain close would drop writes still queued in the channel).
    private func closeAfterFlush() {
        let ping = HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: 0), ack: false))
        channel.writeAndFlush(ping).whenComplete { [channel] _ in
            channel.close(promise: nil)
        }
    }
}

// Each instance belongs to one channel's event loop and is only touched there.
extension APNsSimulatorConnection: @unchecked Sendable {}
