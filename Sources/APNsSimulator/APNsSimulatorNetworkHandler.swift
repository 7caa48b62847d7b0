import DequeModule
import NIOCore

/// Carries out ``APNsSimulatorNetwork`` on one connection: the first handler of the pipeline (next
/// to the socket, below TLS) holds every chunk read and every write until its
/// ``APNsSimulatorDelayLine`` says it arrives. A close waits for the writes before it, and the
/// client's close reaches the simulator after the bytes it sent before it. Confined to the
/// channel's event loop.
final class APNsSimulatorNetworkHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var reads: APNsSimulatorDelayLine
    private var writes: APNsSimulatorDelayLine
    private var readQueue: Deque<(arrival: Int64, bytes: ByteBuffer)> = []
    private var writeQueue: Deque<(arrival: Int64, bytes: ByteBuffer, promise: EventLoopPromise<Void>?)> = []
    private var readTimer: Scheduled<Void>?
    private var writeTimer: Scheduled<Void>?
    /// The client closed its side; the simulator learns it after the bytes queued before.
    private var inactiveAfterReads = false
    /// A close asked for while writes were queued: it follows them.
    private var closeAfterWrites: (mode: CloseMode, promise: EventLoopPromise<Void>?)?

    init(network: APNsSimulatorNetwork) {
        self.reads = APNsSimulatorDelayLine(network: network)
        self.writes = APNsSimulatorDelayLine(network: network)
    }

    private static var now: Int64 { Int64(NIODeadline.now().uptimeNanoseconds) }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        let arrival = reads.arrival(ofBytes: bytes.readableBytes, sentAt: Self.now, jitter: Double.random(in: 0...1))
        readQueue.append((arrival, bytes))
        if readTimer == nil { scheduleReads(context: context) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Delivered reads are completed when they arrive.
    }

    func channelInactive(context: ChannelHandlerContext) {
        readTimer?.cancel()
        writeTimer?.cancel()
        readTimer = nil
        writeTimer = nil
        // Writes can no longer reach the client; what it sent before closing is still delivered.
        for write in writeQueue { write.promise?.fail(ChannelError.ioOnClosedChannel) }
        writeQueue.removeAll()
        if readQueue.isEmpty {
            context.fireChannelInactive()
        } else {
            inactiveAfterReads = true
            deliverReads(context: context, all: true)
        }
    }

    private func scheduleReads(context: ChannelHandlerContext) {
        guard let first = readQueue.first else { return }
        let delay = max(first.arrival - Self.now, 0)
        readTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(delay)) { [self] in
            readTimer = nil
            deliverReads(context: context, all: false)
        }
    }

    private func deliverReads(context: ChannelHandlerContext, all: Bool) {
        let now = Self.now
        var delivered = false
        while let first = readQueue.first, all || first.arrival <= now {
            readQueue.removeFirst()
            context.fireChannelRead(wrapInboundOut(first.bytes))
            delivered = true
        }
        if delivered { context.fireChannelReadComplete() }
        if inactiveAfterReads {
            if readQueue.isEmpty {
                inactiveAfterReads = false
                context.fireChannelInactive()
            }
        } else {
            scheduleReads(context: context)
        }
    }

    // MARK: Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let bytes = unwrapOutboundIn(data)
        let arrival = writes.arrival(ofBytes: bytes.readableBytes, sentAt: Self.now, jitter: Double.random(in: 0...1))
        writeQueue.append((arrival, bytes, promise))
        if writeTimer == nil { scheduleWrites(context: context) }
    }

    func flush(context: ChannelHandlerContext) {
        // Written (and flushed) when they arrive.
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode != .input, !writeQueue.isEmpty else {
            context.close(mode: mode, promise: promise)
            return
        }
        if let earlier = closeAfterWrites {
            // One close is enough; a second learns the first one's outcome.
            if let promise {
                if let first = earlier.promise {
                    first.futureResult.cascade(to: promise)
                } else {
                    closeAfterWrites = (earlier.mode, promise)
                }
            }
            return
        }
        closeAfterWrites = (mode, promise)
    }

    private func scheduleWrites(context: ChannelHandlerContext) {
        guard let first = writeQueue.first else { return }
        let delay = max(first.arrival - Self.now, 0)
        writeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(delay)) { [self] in
            writeTimer = nil
            deliverWrites(context: context)
        }
    }

    private func deliverWrites(context: ChannelHandlerContext) {
        let now = Self.now
        var wrote = false
        while let first = writeQueue.first, first.arrival <= now {
            writeQueue.removeFirst()
            context.write(wrapOutboundOut(first.bytes), promise: first.promise)
            wrote = true
        }
        if wrote { context.flush() }
        if writeQueue.isEmpty, let close = closeAfterWrites {
            closeAfterWrites = nil
            context.close(mode: close.mode, promise: close.promise)
        } else {
            scheduleWrites(context: context)
        }
    }
}
