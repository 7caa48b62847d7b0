public import Foundation
public import Logging
import PushCore

/// How a long-running process writes its log lines to standard error (`--log-format`).
public enum LogFormat: String, CaseIterable, Sendable {
    /// swift-log's stream format, for people reading a terminal.
    case text
    /// One JSON object per line, for log pipelines (Loki, Elasticsearch, Cloud Logging…).
    case json

    /// A handler of this format for `label`, at `level`, writing to standard error.
    public func handler(label: String, level: Logger.Level) -> any LogHandler {
        switch self {
        case .text:
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        case .json:
            // One write per line: lines of different threads do not interleave.
            var handler = JSONLogHandler(label: label) { line in
                FileHandle.standardError.write(Data(line))
            }
            handler.logLevel = level
            return handler
        }
    }
}

/// A `LogHandler` that writes each entry as one line of JSON:
///
///     {"time":"2026-11-25T17:23:38.120Z","level":"error","label":"pushfleet.worker",
///      "message":"…","source":"PushPipeline","metadata":{"app":"news","job":"j1"}}
///
/// `time` is RFC 3339 in UTC with milliseconds; `error` appears when the entry carries one; `metadata` (the handler's, the logger's and the
/// entry's, later ones winning) is left out when empty; nested metadata stays nested. The
/// message and every value are JSON strings, escaped, so a line never breaks in two.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    private let label: String
    private let write: @Sendable ([UInt8]) -> Void
    private let now: @Sendable () -> Date

    /// - Parameters:
    ///   - write: receives each line, newline included.
    ///   - now: the clock (tests fix it).
    public init(
        label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider,
        now: @escaping @Sendable () -> Date = Date.init, write: @escaping @Sendable ([UInt8]) -> Void
    ) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.now = now
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() {
            merged.merge(provided) { _, new in new }
        }
        if let entry = event.metadata {
            merged.merge(entry) { _, new in new }
        }
        var line: JSONObject = [
            "time": .string(RFC3339Timestamp.string(from: now())),
            "level": .string(event.level.rawValue),
            "label": .string(label),
            "message": .string(event.message.description),
            "source": .string(event.source),
        ]
        if let error = event.error {
            line["error"] = .string("\(error)")
        }
        if !merged.isEmpty {
            line["metadata"] = Self.json(merged)
        }
        var bytes = Array(JSONValue.object(line).compactData())
        bytes.append(UInt8(ascii: "\n"))
        write(bytes)
    }

    /// Keys in sorted order, so equal metadata always reads the same.
    static func json(_ metadata: Logger.Metadata) -> JSONValue {
        var object = JSONObject()
        for key in metadata.keys.sorted() {
            object[key] = json(metadata[key]!)
        }
        return .object(object)
    }

    static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let string): .string(string)
        case .stringConvertible(let convertible): .string(convertible.description)
        case .dictionary(let dictionary): json(dictionary)
        case .array(let array): .array(array.map(json))
        }
    }
}
