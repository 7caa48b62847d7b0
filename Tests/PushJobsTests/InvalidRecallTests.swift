import PushCore
import Testing

@testable import PushJobs

/// The field a recall that does not validate names: the caller's view of it, where the
/// overwriting content sits under `overwrite-with`.
@Suite struct InvalidRecallTests {
    private func field(_ name: String) -> String {
        JobOperator.InvalidRecall(error: MessageValidationError(field: name, code: .invalidValue, message: "bad")).field
    }

    @Test func theOverwritingContentIsNamedUnderOverwriteWith() {
        #expect(field("notification.aps.alert") == "overwrite-with.notification.aps.alert")
        #expect(field("headers.expiration") == "overwrite-with.headers.expiration")
        #expect(field("audience") == "audience", "the campaign's, not the overwrite's")
        let invalid = JobOperator.InvalidRecall(error: MessageValidationError(field: "notification", code: .invalidValue, message: "too large"))
        #expect(invalid.description.hasPrefix("overwrite-with.notification: too large"))
    }
}
