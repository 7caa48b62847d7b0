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
        while devices.count < limit, let line = try nextLine() {
            lineNumber += 1
            let text = String(decoding: Self.trimmed(line), as: UTF8.self)
            if text.isEmpty || text.hasPrefix("#") { continue }
            if format == .csv && lineNumber == 1 && text.lowercased().hasPrefix("token,") { continue }
            do {
                devices.append(try parse(text))
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

    private func parse(_ text: String) throws -> DeviceRegistration {
        var tokenText: String
        var environmentText: String?
        var openID: String?
        var tags: [String] = []
        var registeredAt: Int64?
        var timeZone: String?
        switch format {
        case .csv:
            let fields = text.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map {
                String(decoding: Self.trimmed(ArraySlice($0)), as: UTF8.self)
            }
            guard fields.count <= 5 else { throw fail("expected token,environment,openid,tags,time-zone") }
            tokenText = fields[0]
            environmentText = fields.count > 1 && !fields[1].isEmpty ? fields[1] : nil
            openID = fields.count > 2 && !fields[2].isEmpty ? fields[2] : nil
            tags = fields.count > 3 ? fields[3].split(separator: "|").map(String.init) : []
            timeZone = fields.count > 4 && !fields[4].isEmpty ? fields[4] : nil
        case .jsonl:
            guard let object = try? JSONValue(parsing: Data(text.utf8)).objectValue else { throw fail("not a JSON object") }
            guard let token = object["token"]?.stringValue else { throw fail("token: a string is required") }
            tokenText = token
            environmentText = object["environment"]?.stringValue
            openID = object["openid"]?.stringValue
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
        }
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
