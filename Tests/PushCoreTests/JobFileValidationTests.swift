import Foundation
import PushCore
import Testing

/// The result `pushfleet job validate` prints.
struct JobFileValidationTests {
    static func line(_ validation: JobFileValidation) throws -> JSONObject {
        try #require(try JSONValue(parsing: Data(validation.jsonLine.utf8)).objectValue)
    }

    @Test func validJobLine() throws {
        let validation = JobFileValidation(file: "job.json", data: Fixtures.job.compactData())
        #expect(validation.isValid)
        let line = try Self.line(validation)
        #expect(line.keys == ["file", "valid", "field", "code", "message", "job"])
        #expect(line["file"] == "job.json")
        #expect(line["valid"] == true)
        #expect(line["field"] == .null)
        let job = try #require(line["job"]?.objectValue)
        #expect(job["app"] == "com.example.news")
        #expect(job["audience"] == "tokens")
        #expect(job["listed-recipients"] == 1)
        #expect(job["push-type"] == "alert")
        #expect(job["priority"] == 10)
        #expect(job["payload-bytes"] == .number(JSONNumber(#"{"aps":{"alert":"Hello"}}"#.utf8.count)))
        #expect(!validation.jsonLine.contains("\n"))
        #expect(validation.textLine.hasPrefix("job.json: ok ("))
    }

    @Test func invalidJobLine() throws {
        let json = Fixtures.job.setting("silent", at: ["headers", "push-type"])
        let validation = JobFileValidation(file: "bad.json", data: json.compactData())
        #expect(!validation.isValid)
        let line = try Self.line(validation)
        #expect(line["valid"] == false)
        #expect(line["field"] == "headers.push-type")
        #expect(line["code"] == "unknown-push-type")
        #expect(line["message"]?.stringValue?.contains("silent") == true)
        #expect(line["job"] == .null)
        #expect(validation.textLine.hasPrefix("bad.json: headers.push-type: "))
    }

    @Test func notJSON() throws {
        let validation = JobFileValidation(file: "x", data: Data("push it".utf8))
        let line = try Self.line(validation)
        #expect(line["field"] == "$")
        #expect(line["code"] == "malformed-json")
    }

    @Test func readsFilesAndReportsUnreadableOnes() throws {
        let example = Fixtures.examples.appendingPathComponent("broadcast.json")
        #expect(JobFileValidation(contentsOfFile: example.path).isValid)
        let missing = JobFileValidation(contentsOfFile: "/nonexistent/job.json")
        #expect(missing.file == "/nonexistent/job.json")
        guard case .failure(let error) = missing.result else {
            Issue.record("a missing file was accepted")
            return
        }
        #expect(error.field == "$")
        #expect(error.code == .unreadable)
    }

    @Test func exitCode() {
        let valid = JobFileValidation(file: "a", data: Fixtures.job.compactData())
        let invalid = JobFileValidation(file: "b", data: Data("[]".utf8))
        #expect(JobFileValidation.exitCode(for: [valid, valid]) == 0)
        #expect(JobFileValidation.exitCode(for: [valid, invalid]) == 1)
    }
}
