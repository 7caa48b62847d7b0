import Logging
import Synchronization

/// Every formatted log line of a test, kept in memory.
package final class LogCapture: Sendable {
    private let storage = Mutex<[String]>([])

    package init() {}
    package var lines: [String] { storage.withLock { $0 } }
    package func append(_ line: String) { storage.withLock { $0.append(line) } }
}

/// Formats each record like a stream handler (label, level, message, metadata, source) into a
/// ``LogCapture``.
package struct CapturingLogHandler: LogHandler {
    package let label: String
    package let capture: LogCapture
    package var logLevel: Logger.Level = .trace
    package var metadata: Logger.Metadata = [:]

    package init(label: String, capture: LogCapture) {
        self.label = label
        self.capture = capture
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(
        level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt
    ) {
        let merged = metadata.merging(explicit ?? [:]) { $1 }
        let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        capture.append("\(label) \(level) \(fields) [\(source)] \(message)")
    }
}
