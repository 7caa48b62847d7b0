import Foundation
import Logging
import PushCore
import PushLogging
import Synchronization
import Testing

@Suite("JSON log lines")
struct JSONLogHandlerTests {
    /// The lines a handler wrote, newline included.
    final class Lines: Sendable {
        let value = Mutex<[[UInt8]]>([])
        var all: [[UInt8]] { value.withLock { $0 } }
    }

    static let instant = Date(timeIntervalSince1970: 1_795_000_000.125)

    func logger(_ lines: Lines, level: Logger.Level = .info, provider: Logger.MetadataProvider? = nil) -> Logger {
        Logger(label: "pushfleet.test") { label in
            var handler = JSONLogHandler(label: label, metadataProvider: provider, now: { Self.instant }) { line in
                lines.value.withLock { $0.append(line) }
            }
            handler.logLevel = level
            handler[metadataKey: "worker"] = "w-1"
            handler[metadataKey: "app"] = "from-handler"
            return handler
        }
    }

    @Test("each entry is one line of JSON with time, level, label, message, source and the merged metadata")
    func oneObjectPerLine() throws {
        let lines = Lines()
        let provider = Logger.MetadataProvider { ["trace": "t-9", "app": "from-provider"] }
        var logger = logger(lines, provider: provider)
        logger[metadataKey: "partition"] = "3"
        logger.error(
            "job \"j1\" paused:\nsee `pushfleet stats`",
            metadata: ["app": "news", "counts": ["rejected": "342", "of": .stringConvertible(342)], "reasons": ["BadDeviceToken", "\u{1}"]])

        let written = lines.all
        #expect(written.count == 1)
        let line = try #require(written.first)
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false, "a message's newline is escaped, the line stays one")
        let object = try #require(try JSONValue(parsing: Data(line)).objectValue)
        #expect(object.keys == ["time", "level", "label", "message", "source", "metadata"])
        #expect(object["time"] == "2026-11-18T11:06:40.125Z")
        #expect(object["level"] == "error")
        #expect(object["label"] == "pushfleet.test")
        #expect(object["message"] == "job \"j1\" paused:\nsee `pushfleet stats`")
        #expect(object["source"] == "PushLoggingTests")
        // The entry's metadata wins over the provider's, which wins over the handler's.
        #expect(
            object["metadata"] == [
                "app": "news", "counts": ["of": "342", "rejected": "342"], "partition": "3",
                "reasons": ["BadDeviceToken", "\u{1}"], "trace": "t-9", "worker": "w-1",
            ])
    }

    @Test("entries below the level are not written; an error value gets its own field; no metadata, no field")
    func levelAndError() throws {
        struct Refused: Error, CustomStringConvertible {
            var description: String { "refused by the broker" }
        }
        let lines = Lines()
        let logger = Logger(label: "pushfleet.bare") { label in
            JSONLogHandler(label: label, metadataProvider: nil, now: { Self.instant }) { line in lines.value.withLock { $0.append(line) } }
        }
        logger.debug("not at info")
        logger.warning("publishing failed", error: Refused(), source: "Kafka")
        logger.info("plain")
        let objects = try lines.all.map { try #require(try JSONValue(parsing: Data($0)).objectValue) }
        #expect(objects.map { $0["message"] } == ["publishing failed", "plain"])
        #expect(objects[0]["error"] == "refused by the broker")
        #expect(objects[0]["source"] == "Kafka")
        #expect(objects[1]["metadata"] == nil)
        #expect(objects[1]["error"] == nil)
    }

    @Test("--log-format names its formats")
    func formats() {
        #expect(LogFormat(rawValue: "json") == .json)
        #expect(LogFormat(rawValue: "text") == .text)
        #expect(LogFormat(rawValue: "logfmt") == nil)
        #expect(LogFormat.json.handler(label: "x", level: .error).logLevel == .error)
        #expect(LogFormat.text.handler(label: "x", level: .debug).logLevel == .debug)
    }
}
