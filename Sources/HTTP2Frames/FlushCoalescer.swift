import NIOCore

/// Folds the flushes a handler asks for within one event loop tick into one: the flush runs
/// after the tasks already queued on the loop (typically the rest of the same burst) have
/// written their frames, so a burst of small HTTP/2 frames leaves as one TLS write.
///
/// Use from one channel handler, on its event loop.
public final class FlushCoalescer {
    private var isScheduled = false

    public init() {}

    /// Flushes `context` soon, unless a flush is already on its way.
    public func flushSoon(_ context: ChannelHandlerContext) {
        schedule(on: context.eventLoop) { context.flush() }
    }

    /// Runs `flush` soon on `eventLoop`, unless a flush is already on its way: for a handler
    /// that gathers its frames in a buffer of its own and writes it as it flushes.
    public func schedule(on eventLoop: any EventLoop, _ flush: @escaping () -> Void) {
        guard !isScheduled else { return }
        isScheduled = true
        eventLoop.assumeIsolated().execute {
            self.isScheduled = false
            flush()
        }
    }
}
