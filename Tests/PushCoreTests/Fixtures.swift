import Foundation
import PushCore

/// Paths of the example files and a small valid job to derive test cases from.
enum Fixtures {
    /// `<root>/schemas`, found from this file's location `<root>/Tests/PushCoreTests/`.
    static let schemas = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("schemas")
    static let examples = schemas.appendingPathComponent("examples")
    static let invalidExamples = examples.appendingPathComponent("invalid")
    static let expectationsFile = invalidExamples.appendingPathComponent("expectations.json")

    /// The `.json` files directly in `directory`, by name.
    static func jsonFiles(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { directory.appendingPathComponent($0) }
    }

    static var validExampleFiles: [URL] { jsonFiles(in: examples) }
    static var invalidExampleFiles: [URL] { jsonFiles(in: invalidExamples).filter { $0 != expectationsFile } }

    /// A 32-byte token in hex.
    static let token = String(repeating: "ab", count: 32)

    /// The smallest valid alert job.
    static let job: JSONValue = [
        "app": "com.example.news",
        "environment": "production",
        "audience": ["tokens": [.string(token)]],
        "notification": ["aps": ["alert": "Hello"]],
        "headers": ["push-type": "alert"],
    ]

    /// Decodes and validates `json`'s compact bytes.
    static func decode(_ json: JSONValue) throws(MessageValidationError) -> PushJob {
        try PushJob.decodeAndValidate(from: json.compactData())
    }

    /// The error `decode(json)` throws, or `nil` when it accepts the job.
    static func rejection(_ json: JSONValue) -> MessageValidationError? {
        do {
            _ = try decode(json)
            return nil
        } catch {
            return error
        }
    }
}
