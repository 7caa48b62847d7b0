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

/// What became of one send.
enum SendResult: Sendable {
    /// APNs answered (accepted or refused).
    case response(APNsResponse)
    /// No answer: timeout, lost connection, unusable credential, shutdown.
    case failure(APNsError)
    /// Not sent: the app's sending is suspended, or the worker is stopping.
    case notSent(reason: String)
    /// Not sent, and never will be: the job was cancelled.
    case cancelled

    /// How the outcome is handled.
    var responseClass: APNsResponseClass {
        switch self {
        case .response(let response): response.responseClass
        case .failure(let error): error.code == .shutdown || error.code == .cancelled ? .retryable : error.responseClass
        case .notSent: .retryable
        case .cancelled: .permanent
        }
    }

    /// The reason to record: APNs's reason, the client error's code, or why it was not sent.
    var reason: String {
        switch self {
        case .response(let response): response.reason?.rawValue ?? (response.isSuccess ? "Success" : "HTTP\(response.status)")
        case .failure(let error): "\(error.code)"
        case .notSent(let reason): reason
        case .cancelled: "cancelled"
        }
    }

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
