import PushCore
import Testing

/// `collapse-id` is limited to 64 bytes of UTF-8, not 64 characters.
struct CollapseIDTests {
    static let cases: [(collapseID: String, accepted: Bool)] = [
        (String(repeating: "a", count: 64), true),
        (String(repeating: "a", count: 65), false),
        (String(repeating: "é", count: 32), true),  // 32 characters, 64 bytes
        (String(repeating: "é", count: 33), false),  // 33 characters, 66 bytes
        (String(repeating: "a", count: 63) + "é", false),  // 64 characters, 65 bytes
        (String(repeating: "🚀", count: 16), true),  // 16 characters, 64 bytes
        (String(repeating: "🚀", count: 17), false),  // 17 characters, 68 bytes
        ("€", true),
    ]

    @Test(arguments: cases)
    func byteLimit(collapseID: String, accepted: Bool) {
        let error = Fixtures.rejection(Fixtures.job.setting(.string(collapseID), at: ["headers", "collapse-id"]))
        if accepted {
            #expect(error == nil)
        } else {
            #expect(error?.field == "headers.collapse-id")
            #expect(error?.code == .collapseIDTooLong)
            #expect(error?.message.contains("\(collapseID.utf8.count) bytes") == true)
        }
    }
}

/// ``PushJob/collapseID(jobID:)``: which `apns-collapse-id` a job's notifications carry.
struct DerivedCollapseIDTests {
    static func job(_ change: (inout JSONValue) -> Void = { _ in }) throws -> PushJob {
        var json = Fixtures.job
        change(&json)
        return try Fixtures.decode(json)
    }

    @Test func anAlertCarriesItsJobIDUnlessTheProducerSetOne() throws {
        #expect(try Self.job().collapseID(jobID: "campaign-42") == "campaign-42")
        let own = try Self.job { $0 = $0.setting("match-7", at: ["headers", "collapse-id"]) }
        #expect(own.collapseID(jobID: "campaign-42") == "match-7")
        #expect(own.collapseID(jobID: nil) == "match-7", "a test send keeps the producer's own")
    }

    @Test func aJobIDOver64BytesIsHashedToAStableShortID() throws {
        let long = String(repeating: "x", count: 65)
        let derived = try #require(try Self.job().collapseID(jobID: long))
        #expect(derived.hasPrefix("pf-") && derived.utf8.count == 19)
        #expect(derived.dropFirst(3).allSatisfy { $0.isHexDigit })
        // FNV-1a 64 of the bytes, so a later request (a recall) can name it: pinned here.
        #expect(try Self.job().collapseID(jobID: "a" + String(repeating: "b", count: 64)) == "pf-0b2edffbc144280c")
        #expect(try Self.job().collapseID(jobID: long + "y") != derived)
        #expect(try Self.job().collapseID(jobID: String(repeating: "é", count: 32)) == String(repeating: "é", count: 32), "64 bytes fit")
    }

    @Test func noDerivedIDForOtherPushTypesTestSendsOrAJobThatOptedOut() throws {
        let background = try Self.job {
            $0 = $0.setting("background", at: ["headers", "push-type"]).setting(.number(JSONNumber(5)), at: ["headers", "priority"])
        }
        #expect(background.collapseID(jobID: "campaign-42") == nil)
        #expect(try Self.job().collapseID(jobID: nil) == nil)
        #expect(try Self.job().collapseID(jobID: "") == nil)
        let optedOut = try Self.job { $0 = $0.setting(false, at: ["collapse-by-job"]) }
        #expect(!optedOut.collapseByJob)
        #expect(optedOut.collapseID(jobID: "campaign-42") == nil)
    }

    @Test func collapseByJobIsWrittenOnlyWhenOffAndMustBeABoolean() throws {
        #expect(try Self.job().jsonValue.objectValue?["collapse-by-job"] == nil)
        let optedOut = try Self.job { $0 = $0.setting(false, at: ["collapse-by-job"]) }
        #expect(optedOut.jsonValue.objectValue?["collapse-by-job"] == .bool(false))
        #expect(try PushJob.decodeAndValidate(from: optedOut.jsonData()) == optedOut)
        let error = Fixtures.rejection(Fixtures.job.setting("no", at: ["collapse-by-job"]))
        #expect(error?.field == "collapse-by-job")
    }
}
