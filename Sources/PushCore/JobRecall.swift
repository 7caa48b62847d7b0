import APNsCore
public import Foundation

/// What a recall job does to an earlier campaign (a job's `recall` field): its audience is the
/// campaign's, narrowed at expansion to the devices whose notification APNs accepted, and each
/// of them gets either a withdraw (a background push naming the campaign, for the app to remove
/// the notification it shows) or new content under the campaign's collapse id, which replaces
/// the notification on the device.
public struct JobRecall: Hashable, Sendable {
    /// How the campaign's notifications are taken back.
    public enum Mode: String, Hashable, Sendable, CaseIterable {
        /// `{"aps": {"content-available": 1}, "pushfleet": {"withdraw": "<job>"}}`: the app removes
        /// the campaign's notification (`removeDeliveredNotifications`).
        case withdraw
        /// New content with the campaign's `apns-collapse-id`: it replaces the notification shown.
        case overwrite
    }

    /// The recalled campaign's job id.
    public var jobID: String
    public var mode: Mode

    public init(jobID: String, mode: Mode) {
        self.jobID = jobID
        self.mode = mode
    }

    /// The custom payload key of a withdraw, beside `aps`: `{"pushfleet": {"withdraw": "<job>"}}`
    /// (the same `pushfleet` key that carries a campaign's id for receipts).
    public static let withdrawKey = "withdraw"
    /// PushFleet's own payload key beside `aps` (the job id for receipts, a withdraw).
    public static let payloadKey = "pushfleet"

    /// The payload of a withdraw of `jobID`.
    public static func withdrawPayload(of jobID: String) -> APNsPayload {
        APNsPayload(["aps": ["content-available": 1], payloadKey: [withdrawKey: .string(jobID)]])
    }

    var jsonValue: JSONValue {
        ["job": .string(jobID), "mode": .string(mode.rawValue)]
    }

    /// The recall a stored job's spec names in its `recall` field; `nil` for a spec that names
    /// none (a campaign) or one that does not decode.
    public static func of(spec: JSONValue?) -> JobRecall? {
        guard let value = spec?.objectValue?["recall"] else { return nil }
        return try? JobRecall(json: value, at: FieldPath.root.key("recall"))
    }

    init(json: JSONValue, at path: FieldPath) throws(MessageValidationError) {
        let object = try json.decodeObject(at: path)
        try object.rejectUnknownKeys(["job", "mode"], at: path)
        jobID = try object.require("job", at: path).decodeString(at: path.key("job"))
        let modePath = path.key("mode")
        let raw = try object.require("mode", at: path).decodeString(at: modePath)
        guard let mode = Mode(rawValue: raw) else {
            throw MessageValidationError(modePath, .invalidValue, "'\(raw)' is not withdraw or overwrite")
        }
        self.mode = mode
    }

    /// The rules a recall job meets besides a plain job's: an audience with a sent state to
    /// narrow by (not a channel or a Live Activity), a withdraw that is a background push with
    /// its payload, an overwrite that is an alert with the campaign's collapse id.
    func validate(_ job: PushJob) throws(MessageValidationError) {
        switch job.audience {
        case .channel, .activity:
            throw MessageValidationError(
                FieldPath.root.key("audience"), .invalidValue,
                "a recall goes to the devices of a campaign's sent state: tokens, openids, tags, broadcast or an area, not \(job.audience.kind)")
        case .tokens, .openIDs, .tags, .broadcast, .area:
            break
        }
        switch mode {
        case .withdraw:
            guard job.headers.pushType == .background else {
                throw MessageValidationError(
                    FieldPath.root.key("headers").key("push-type"), .invalidValue, "must be background for a withdraw, is \(job.headers.pushType)")
            }
            guard job.notification.customKeys[Self.payloadKey]?.objectValue?[Self.withdrawKey] == .string(jobID) else {
                throw MessageValidationError(
                    FieldPath.root.key("notification").key(Self.payloadKey).key(Self.withdrawKey), .missingField,
                    "must name the recalled job '\(jobID)'")
            }
        case .overwrite:
            guard job.headers.pushType == .alert else {
                throw MessageValidationError(
                    FieldPath.root.key("headers").key("push-type"), .invalidValue,
                    "must be alert for an overwrite (only a notification shown can be replaced), is \(job.headers.pushType)")
            }
            guard job.headers.collapseID != nil else {
                throw MessageValidationError(
                    FieldPath.root.key("headers").key("collapse-id"), .missingField,
                    "is required for an overwrite: the collapse id of the recalled campaign's notifications")
            }
        }
    }
}

/// Why a campaign cannot be recalled (``PushJob/recall(id:mode:overwriteWith:publishedAt:now:window:)``).
public struct RecallRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The campaign is itself a recall.
        case isRecall = "recall-of-recall"
        /// Its audience has no sent state per device (a channel, a Live Activity).
        case audience = "recall-audience"
        /// It was published longer ago than the recall window, or when is not known.
        case windowPassed = "recall-window-passed"
        /// An overwrite of a campaign whose notifications carry no collapse id.
        case noCollapseID = "no-collapse-id"
        /// The overwriting content is not an alert.
        case notAlert = "overwrite-not-alert"
        /// The overwriting content uses the payload key the server fills in.
        case reservedKey = "reserved-key"
    }

    public let code: Code
    /// The field at fault: `job` (the campaign) or `overwrite-with.…`.
    public let field: String
    public let message: String

    public var description: String { message }

    /// Whether the campaign cannot be recalled (what it is, or when it was sent), rather than
    /// the overwriting content being wrong: a conflict with the campaign's state, not bad input.
    public var concernsCampaign: Bool {
        switch code {
        case .isRecall, .audience, .windowPassed, .noCollapseID: true
        case .notAlert, .reservedKey: false
        }
    }
}

extension PushJob {
    /// The job that recalls this campaign (published as ``id`` at `publishedAt`), as `recallID`:
    /// the same app, environment and audience, throttled as the campaign was, named after it;
    /// `overwriteWith` (its `notification` and optional `headers`) makes it an overwrite, else a
    /// withdraw.
    ///
    /// - Throws: ``RecallRefusal`` when the campaign is a recall, has no per-device sent state,
    ///   was published more than `window` before `now` (or when is unknown), or, for an
    ///   overwrite, when its notifications carry no collapse id or the new content is no alert.
    public func recall(
        id recallID: String, overwriteWith: (notification: APNsPayload, headers: PushHeaders?)?, publishedAt: Date?, now: Date,
        window: TimeInterval
    ) throws(RecallRefusal) -> PushJob {
        let campaign = id ?? ""
        if let recall {
            throw RecallRefusal(
                code: .isRecall, field: "job", message: "job \(campaign) is itself a recall (of job \(recall.jobID)); it cannot be recalled")
        }
        switch audience {
        case .channel, .activity:
            throw RecallRefusal(
                code: .audience, field: "job",
                message: "job \(campaign) went to a \(audience.kind): no per-device sent state tells which devices got it, so it cannot be recalled")
        case .tokens, .openIDs, .tags, .broadcast, .area:
            break
        }
        guard let publishedAt else {
            throw RecallRefusal(
                code: .windowPassed, field: "job", message: "when job \(campaign) was published is no longer known: it cannot be recalled")
        }
        let age = now.timeIntervalSince(publishedAt)
        guard age <= window else {
            throw RecallRefusal(
                code: .windowPassed, field: "job",
                message:
                    "job \(campaign) was published \(Self.hours(age)) ago; a campaign can be recalled within \(Self.hours(window)) (jobs.recall-window)"
            )
        }
        var recalling = PushJob(
            app: app, environment: environment, audience: audience, notification: JobRecall.withdrawPayload(of: campaign),
            // An alert sent to another of the app's topics is withdrawn there (a background push's
            // topic has no suffix either); any other push type's topic carries its own suffix.
            headers: PushHeaders(pushType: .background, priority: .considerDevicePower, topic: headers.pushType == .alert ? headers.topic : nil),
            throttle: throttle, collapseByJob: false)
        recalling.id = recallID
        recalling.name = name.map { String("Recall: \($0)".unicodeScalars.prefix(Self.maxIdentifierLength)) }
        recalling.recall = JobRecall(jobID: campaign, mode: .withdraw)
        guard let overwriteWith else { return recalling }
        guard let collapseID = collapseID(jobID: campaign) else {
            throw RecallRefusal(
                code: .noCollapseID, field: "job",
                message:
                    "job \(campaign)'s notifications carry no collapse id (\(headers.pushType == .alert ? "collapse-by-job is false" : "not an alert")): nothing can replace them; withdraw them instead"
            )
        }
        var newHeaders = overwriteWith.headers ?? headers
        guard newHeaders.pushType == .alert else {
            throw RecallRefusal(
                code: .notAlert, field: "overwrite-with.headers.push-type",
                message: "must be alert: only an alert replaces the notification shown, is \(newHeaders.pushType)")
        }
        newHeaders.collapseID = collapseID
        var content = overwriteWith.notification
        guard content.object[JobRecall.payloadKey] == nil else {
            throw RecallRefusal(
                code: .reservedKey, field: "overwrite-with.notification.\(JobRecall.payloadKey)",
                message: "is reserved: the server puts the recall's job id there for receipts")
        }
        content.object[JobRecall.payloadKey] = ["job": .string(recallID)]
        recalling.notification = content
        recalling.headers = newHeaders
        recalling.name = name.map { String("Overwrite: \($0)".unicodeScalars.prefix(Self.maxIdentifierLength)) }
        recalling.recall = JobRecall(jobID: campaign, mode: .overwrite)
        return recalling
    }

    private static func hours(_ interval: TimeInterval) -> String {
        let hours = interval / 3600
        return hours == hours.rounded() ? "\(Int(hours)) h" : String(format: "%.1f h", hours)
    }
}

extension PushJob {
    /// The content of an overwrite, `{"notification": {…}, "headers": {…}}` (headers optional:
    /// the campaign's; never a `collapse-id`: the campaign's is used), checked for shape; the
    /// fields at fault are named under `prefix`.
    public static func overwriteContent(
        _ object: JSONObject, at prefix: String
    ) throws(MessageValidationError) -> (notification: APNsPayload, headers: PushHeaders?) {
        let path = FieldPath.root.key(prefix)
        try object.rejectUnknownKeys(["notification", "headers"], at: path)
        let notification = try APNsPayload(json: object.require("notification", at: path), at: path.key("notification"))
        let headers = try object["headers"].map { value throws(MessageValidationError) in try PushHeaders(json: value, at: path.key("headers")) }
        if headers?.collapseID != nil {
            throw MessageValidationError(
                path.key("headers").key("collapse-id"), .invalidValue,
                "must be left out: an overwrite carries the recalled campaign's collapse id, which is what replaces its notification")
        }
        return (notification, headers)
    }
}
