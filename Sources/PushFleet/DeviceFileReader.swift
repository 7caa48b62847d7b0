import APNsCore
import Foundation
import PushCore
import PushStore

/// Reads a device file a batch at a time without loading it: CSV
/// (`token,environment,openid,tags,time-zone` with tags separated by `|`, an optional header
/// line) or JSON lines (`{"token", "environment", "openid", "tags", "registered-at",
/// "time-zone"}`, other keys ignored: what `devices export` writes).
/// Lines that are not valid are reported with their number and skipped.
struct DeviceFileReader {
    enum Format: String, CaseIterable {
        case csv, jsonl
    }

    let format: Format
    let defaultEnvironment: APNsEnvironment?
    private let handle: FileHandle
    /// Bytes read and not yet returned as lines start at `pendingStart`.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var atEnd = false
    private(set) var lineNumber = 0
    private(set) var bytesRead = 0
    let fileSize: Int

    init(path: String, format: Format, defaultEnvironment: APNsEnvironment?) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw DeviceFileError(line: nil, message: "cannot open \(path)")
        }
        self.handle = handle
        self.format = format
        self.defaultEnvironment = defaultEnvironment
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        fileSize = (attributes?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The next batch of up to `limit` devices, the rejected lines met on the way, or nil at
    /// the end of the file.
    mutating func nextBatch(limit: Int) throws -> (devices: [DeviceRegistration], rejected: [DeviceFileError])? {
        var devices: [DeviceRegistration] = []
        var rejected: [DeviceFileError] = []
        while devices.count < limit, let untrimmed = try nextLine() {
            lineNumber += 1
            let line = Self.trimmed(untrimmed)
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            if format == .csv && lineNumber == 1 && Self.isHeader(line) { continue }
            do {
                switch format {
                case .csv: devices.append(try parseCSV(line))
                case .jsonl: devices.append(try parseJSON(line))
                }
            } catch let error as DeviceFileError {
                rejected.append(error)
            }
        }
        if devices.isEmpty && rejected.isEmpty && atEnd && pendingStart == pending.count { return nil }
        return (devices, rejected)
    }

    private mutating func nextLine() throws -> ArraySlice<UInt8>? {
        while true {
            if let newline = pending[pendingStart...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[pendingStart..<newline]
                pendingStart = newline + 1
                return line
            }
            if atEnd {
                guard pendingStart < pending.count else { return nil }
                defer { pendingStart = pending.count }
                return pending[pendingStart...]
            }
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty {
                atEnd = true
                try? handle.close()
            } else {
                bytesRead += chunk.count
                // Drop the lines returned before, once, instead of after every line.
                pending.removeSubrange(..<pendingStart)
                pendingStart = 0
                pending.append(contentsOf: chunk)
            }
        }
    }

    /// `line` without ASCII whitespace (spaces, tabs, CR, LF) at either end.
    private static func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        guard let first = line.firstIndex(where: { !isSpace($0) }), let last = line.lastIndex(where: { !isSpace($0) }) else {
            return []
        }
        return line[first...last]
    }

    /// Whether a CSV file's first line is its header (`token,…`, any case).
    private static func isHeader(_ line: ArraySlice<UInt8>) -> Bool {
        line.prefix(6).lazy.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }.elementsEqual("token,".utf8)
    }

    /// The fields of a CSV line, each trimmed: read in place, one string made per field kept
    /// (an import reads millions of lines).
    private func parseCSV(_ line: ArraySlice<UInt8>) throws -> DeviceRegistration {
        var fields: [ArraySlice<UInt8>] = []
        fields.reserveCapacity(5)
        var start = line.startIndex
        for index in line.indices where line[index] == UInt8(ascii: ",") {
            fields.append(Self.trimmed(line[start..<index]))
            start = index + 1
        }
        fields.append(Self.trimmed(line[start...]))
        guard fields.count <= 5 else { throw fail("expected token,environment,openid,tags,time-zone") }
        func text(_ field: Int) -> String? {
            fields.count > field && !fields[field].isEmpty ? String(decoding: fields[field], as: UTF8.self) : nil
        }
        let tags =
            fields.count > 3
            ? fields[3].split(separator: UInt8(ascii: "|")).map { String(decoding: $0, as: UTF8.self) } : []
        return try registration(
            tokenText: String(decoding: fields[0], as: UTF8.self), environmentText: text(1), openID: text(2), tags: tags,
            registeredAt: nil, timeZone: text(4))
    }

    private func parseJSON(_ line: ArraySlice<UInt8>) throws -> DeviceRegistration {
        var tags: [String] = []
        var registeredAt: Int64?
        var timeZone: String?
        // Decoded first, as the CSV fields are: bytes that are not UTF-8 read as U+FFFD.
        guard let object = try? JSONValue(parsing: Data(String(decoding: line, as: UTF8.self).utf8)).objectValue else {
            throw fail("not a JSON object")
        }
        guard let token = object["token"]?.stringValue else { throw fail("token: a string is required") }
        if let list = object["tags"] {
            guard let array = list.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
                throw fail("tags: a list of strings is expected")
            }
            tags = array.compactMap(\.stringValue)
        }
        // `devices export` writes it; an import of an export keeps the registration times.
        if let value = object["registered-at"], value != .null {
            guard let time = value.intValue, time >= 0 else { throw fail("registered-at: milliseconds since 1970 are expected") }
            registeredAt = Int64(time)
        }
        if let value = object["time-zone"], value != .null {
            guard let name = value.stringValue else { throw fail("time-zone: an IANA time zone name is expected") }
            timeZone = name
        }
        return try registration(
            tokenText: token, environmentText: object["environment"]?.stringValue, openID: object["openid"]?.stringValue, tags: tags,
            registeredAt: registeredAt, timeZone: timeZone)
    }

    /// A line's device, from its fields as read in either format.
    private func registration(
        tokenText: String, environmentText: String?, openID: String?, tags: [String], registeredAt: Int64?, timeZone: String?
    ) throws -> DeviceRegistration {
        if let timeZone, let problem = TimeZoneName.problem(timeZone) {
            throw fail("time-zone: \(problem)")
        }
        let token: DeviceToken
        do {
            token = try DeviceToken(hex: tokenText)
        } catch {
            throw fail("token: \(error)")
        }
        guard let environment = environmentText.map(APNsEnvironment.init(rawValue:)) ?? defaultEnvironment else {
            throw fail(environmentText == nil ? "environment: missing (or pass --environment)" : "environment: must be sandbox or production")
        }
        return DeviceRegistration(
            token: token, environment: environment, openID: openID, tags: tags, registeredAt: registeredAt, timeZone: timeZone)
    }

    private func fail(_ message: String) -> DeviceFileError {
        DeviceFileError(line: lineNumber, message: message)
    }
}

/// A line of a device file that could not be imported.
struct DeviceFileError: Error, CustomStringConvertible {
    let line: Int?
    let message: String

    var description: String { line.map { "line \($0): \(message)" } ?? message }
}
