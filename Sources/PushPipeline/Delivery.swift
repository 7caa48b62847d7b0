import APNs
import APNsCore
import PushStore

/// One notification to one token, on its first send (from a chunk) or a resend (from the
/// resend buffer).
struct Delivery: Sendable {
    /// Where a send comes from.
    enum Source: Sendable {
        /// A chunk: the first send, at this position of the job's sent state.
        case chunk(position: UInt32)
        /// The resend buffer.
        case resend(ResendEntry)
    }

    var token: DeviceToken
    var source: Source

    /// A first send from a chunk.
    init(token: DeviceToken, position: UInt32) {
        self.token = token
        source = .chunk(position: position)
    }

    /// A resend.
    init(resending entry: ResendEntry) {
        token = entry.token
        source = .resend(entry)
    }

    /// The resend entry it came from; `nil` on the first send.
    var resendEntry: ResendEntry? {
        if case .resend(let entry) = source { entry } else { nil }
    }

    /// The position of a first send; `nil` for a resend.
    var position: UInt32? {
        if case .chunk(let position) = source { position } else { nil }
    }

    /// APNs attempts made before this send.
    var previousAttempts: Int { resendEntry?.attempts ?? 0 }
}

/// What became of one send (``Settlement/Outcome`` says what it means).
enum SendResult: Sendable {
    /// APNs answered (accepted or refused).
    case response(APNsResponse)
    /// No answer: timeout, lost connection, unusable credential, shutdown.
    case failure(APNsError)
    /// Not sent: the app's sending is suspended, or the worker is stopping.
    case notSent(reason: String)
    /// Not sent, and never will be: the job was cancelled.
    case cancelled

    /// Whether the notification reached APNs.
    var wasSent: Bool {
        if case .response = self { return true }
        return false
    }

    /// APNs attempts this send made (0 when not sent).
    var attempts: Int {
        switch self {
        case .response(let response): max(response.attempts, 1)
        case .failure: 1
        case .notSent, .cancelled: 0
        }
    }
}
