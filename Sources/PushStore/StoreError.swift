import Foundation
import Redis

/// Why a call of the store (the registry, jobs, the resend buffer, rate limits, the schedule…)
/// was refused or failed: the argument at fault (``field``), a stable
/// ``code``, a message for people, the error it wraps and whether trying again can help.
///
/// Failures of Redis itself are not wrapped: they arrive as `RedisClientError`, which carries its
/// own retryability.
package struct StoreError: Error, Sendable, CustomStringConvertible {
    /// The argument at fault, as the caller named it (`app`, `openID`, `tags[2]`,
    /// `devices[17].openID`, `expression.none[0]`), or `nil` when no single argument is.
    package var field: String?
    /// What kind of problem it is; stable across releases, for programs to branch on.
    package var code: Code
    /// A sentence for people; wording may change.
    package var message: String
    /// The error this one wraps, if any.
    package var underlying: (any Error)?
    /// Whether the same call may succeed later without changing its arguments.
    package var isRetryable: Bool
    /// The source file that raised the error.
    package var file: String
    /// The source line that raised the error.
    package var line: Int

    /// Creates an error; it is not retryable unless said otherwise.
    package init(
        _ code: Code,
        field: String?,
        message: String,
        underlying: (any Error)? = nil,
        isRetryable: Bool = false,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.field = field
        self.message = message
        self.underlying = underlying
        self.isRetryable = isRetryable
        self.file = file
        self.line = line
    }

    package var description: String {
        var text = "StoreError.\(code): "
        if let field {
            text += "\(field): "
        }
        text += message
        if let underlying {
            text += " (underlying: \(underlying))"
        }
        return text + " [\(file):\(line)]"
    }
}

extension StoreError {
    /// A reply of Redis that a command or script of the store never gives.
    static func unexpected(_ reply: RedisReply, from what: String, file: String = #fileID, line: Int = #line) -> StoreError {
        StoreError(.unexpectedReply, field: nil, message: "\(what) answered \(reply)", file: file, line: line)
    }
}

/// The store's default clock.
package enum StoreClock {
    /// The wall clock in milliseconds since 1970.
    package static let system: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
