import Foundation
import PushCore
import PushStore

extension DeadLetter {
    /// The letter of an unprocessable message with the app and job id that the message's `bytes`
    /// name, where the letter names none; best effort: when the bytes are a JSON object, its
    /// `app` is taken if it is a string naming a configured app, its `id` if it is a string the
    /// store takes as a job id. A job that failed validation is then listed under its app with
    /// its id (``DeadLetterLog``), and keyed by its id on `push.dlq`. A delivery chunk carries
    /// its job's `app` and `id` the same way; a feedback event has no `id`.
    package func naming(from bytes: [UInt8], isConfiguredApp: (String) -> Bool) -> DeadLetter {
        guard app == nil || jobID == nil,
            let object = try? JSONValue(parsing: Data(bytes)).objectValue
        else { return self }
        var named = self
        if named.app == nil, let app = object["app"]?.stringValue, isConfiguredApp(app), DeadLetterLog.isValid(app: app) {
            named.app = app
        }
        if named.jobID == nil, let id = object["id"]?.stringValue, DeadLetterLog.isValid(jobID: id) {
            named.jobID = id
        }
        return named
    }
}
