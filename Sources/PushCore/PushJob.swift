public import APNsCore
public import Foundation

/// One push job as producers publish it to `push.jobs`: what to send, to whom, and how.
///
/// The JSON form is defined by `schemas/push-job.schema.json`. Decode and check a job with
/// ``decodeAndValidate(from:)``; write one with ``jsonData()``.
public struct PushJob: Hashable, Sendable {
    /// The longest `id`, `app` and `idempotency-key`, in Unicode code points (as JSON Schema
    /// counts `maxLength`).
    public static let maxIdentifierLength = 128

    /// The job id, which keys the job's Kafka messages. Producers may leave it out; the API and
    /// the CLI assign a UUID before publishing, so every job on `push.jobs` has one.
    public var id: String?
    /// The app the job belongs to: selects credentials, bundle id and registry.
    public var app: String
    /// The APNs environment to send to; tokens are only valid in the one they came from.
    public var environment: APNsEnvironment
    /// Who receives the notification.
    public var audience: Audience
    /// The payload every recipient receives.
    public var notification: APNsPayload
    /// The APNs headers sent with every notification.
    public var headers: PushHeaders
    /// Overrides of the app's throttling for this job.
    public var throttle: ThrottleOverride?
    /// A producer-chosen key: a second job with the same key for the same app is a duplicate
    /// and is not sent again.
    public var idempotencyKey: String?
    /// When to send; absent means now.
    public var sendAt: Date?
    /// When each device's notification goes out, by the device (`send-at` as an object):
    /// at a local time, or at its best hour. Never set with ``sendAt``.
    public var sendAtDevice: DeviceSendTime?
    /// Whether an alert without its own `collapse-id` carries one derived from the job
    /// (``collapseID(jobID:)``), so that a copy sent twice replaces the first on the device.
    /// `collapse-by-job: false` in the JSON turns it off; on by default.
    public var collapseByJob: Bool
    /// How the notifications reach their devices (`delivery`): through APNs (the default), or
    /// over the online channel first (``DeliveryRoute``). Device tokens only.
    public var delivery: DeliveryRoute = .apns
    /// What people call the campaign (`name`): shown in place of its id by the console, the
    /// reports and the CLI; 1 to 128 characters without control characters. Optional.
    public var name: String?
    /// The earlier campaign this job recalls (`recall`), when it is a recall: set by
    /// ``recall(id:overwriteWith:publishedAt:now:window:)``, not by producers.
    public var recall: JobRecall?

    public init(
        id: String? = nil,
        app: String,
        environment: APNsEnvironment,
        audience: Audience,
        notification: APNsPayload,
        headers: PushHeaders,
        throttle: ThrottleOverride? = nil,
        idempotencyKey: String? = nil,
        sendAt: Date? = nil,
        collapseByJob: Bool = true,
        name: String? = nil
    ) {
        self.id = id
        self.app = app
        self.environment = environment
        self.audience = audience
        self.notification = notification
        self.headers = headers
        self.throttle = throttle
        self.idempotencyKey = idempotencyKey
        self.sendAt = sendAt
        self.collapseByJob = collapseByJob
        self.name = name
    }
}
