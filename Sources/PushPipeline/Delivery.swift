import APNs
import APNsCore
import PushStore

/// One notification to one token, on its first send (from a chunk) or a resend (from the
/// resend buffer).
struct Delivery: Sendable {
    var token: DeviceToken
    /// The resend entry it came from; `nil` on the first send.
    var resendEntry: ResendEntry?

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
