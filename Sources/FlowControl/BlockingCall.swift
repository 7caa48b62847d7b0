import Dispatch
import Synchronization

/// One blocking call run on a thread of its own (a hiredis command on its connection's queue, a
/// librdkafka call on a dispatch queue) for an async caller who may stop waiting: whichever of
/// the call's result and the caller's cancellation comes first resumes the caller, exactly once.
///
/// A blocking C call cannot be interrupted, but the task awaiting it can stop waiting: the
/// caller gets `CancellationError` at once, and the thread finishes the call on its own and
/// learns from ``finish(_:)`` that the result was dropped (and, from ``isCancelled``, whether it
/// should start at all). ``run(on:_:)`` does all of it for a body on a dispatch queue.
///
/// Its members are `@inlinable`: a call per Redis batch or Kafka poll is a hot path, and a generic
/// class used from another module would otherwise look its metadata up at run time on every call.
public final class BlockingCall<Value: Sendable>: Sendable {
    @usableFromInline
    enum State {
        case created
        case waiting(CheckedContinuation<Value, any Error>)
        case cancelled
        case finished
    }

    /// What became of a result.
    public enum Finish: Equatable, Sendable {
        /// The caller got it.
        case delivered
        /// The caller had stopped waiting; it was dropped.
        case abandoned
    }

    @usableFromInline
    let state = Mutex(State.created)

    @inlinable
    public init() {}

    /// Whether the caller stopped waiting.
    @inlinable
    public var isCancelled: Bool {
        state.withLock { if case .cancelled = $0 { true } else { false } }
    }

    /// Parks the caller; answers `false` (having resumed it with `CancellationError`) when it
    /// was cancelled before the call could start.
    @inlinable
    public func start(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
        let started = state.withLock { state in
            guard case .created = state else { return false }
            state = .waiting(continuation)
            return true
        }
        if !started { continuation.resume(throwing: CancellationError()) }
        return started
    }

    /// The caller's task was cancelled: it resumes now, with `CancellationError`.
    @inlinable
    public func cancel() {
        let waiting = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            switch state {
            case .created:
                state = .cancelled
                return nil
            case .waiting(let continuation):
                state = .cancelled
                return continuation
            case .cancelled, .finished:
                return nil
            }
        }
        waiting?.resume(throwing: CancellationError())
    }

    /// Hands the result to the caller, unless it stopped waiting.
    @inlinable
    @discardableResult
    public func finish(_ result: Result<Value, any Error>) -> Finish {
        guard let waiting = detachCaller() else { return .abandoned }
        waiting.resume(with: result)
        return .delivered
    }

    /// Ends the call and returns its waiting caller for the result to be handed over later, or
    /// `nil` when the caller stopped waiting: for a call whose owner has to put things in order
    /// (decided by whether anyone still waits) before the caller runs again.
    @inlinable
    public func detachCaller() -> CheckedContinuation<Value, any Error>? {
        state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .finished
            return continuation
        }
    }

    /// Runs `body` on `queue` and returns its result, or throws `CancellationError` as soon as
    /// the calling task is cancelled: a body not yet started then never runs (unless
    /// `startsEvenIfCancelled`: a step that must happen whether or not anyone waits for it, such
    /// as leaving a consumer group), one running finishes on `queue` and its result is dropped.
    /// Either way `onAbandoned`, if given, runs on `queue` afterwards (to discard state the
    /// abandoned call may have left half-done).
    @inlinable
    public static func run(
        on queue: DispatchQueue,
        startsEvenIfCancelled: Bool = false,
        onAbandoned: (@Sendable () -> Void)? = nil,
        _ body: @escaping @Sendable (BlockingCall<Value>) throws -> Value
    ) async throws -> Value {
        let call = BlockingCall<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard call.start(continuation) || startsEvenIfCancelled else { return }
                queue.async {
                    let skipped = call.isCancelled && !startsEvenIfCancelled
                    if skipped || call.finish(Result { try body(call) }) == .abandoned {
                        onAbandoned?()
                    }
                }
            }
        } onCancel: {
            call.cancel()
        }
    }
}
