public import APNsCore

/// A few facts about a valid job, for `pushfleet job validate` to print.
public struct PushJobSummary: Hashable, Sendable {
    /// The job id, if the producer set one.
    public let id: String?
    /// The app id.
    public let app: String
    /// The APNs environment.
    public let environment: APNsEnvironment
    /// The audience selector: `tokens`, `openids`, `tags` or `broadcast`.
    public let audience: String
    /// How many tokens or openids the job lists; `nil` for tags and broadcasts, which are
    /// resolved later.
    public let listedRecipients: Int?
    /// The push type.
    public let pushType: APNsPushType
    /// The priority the job is sent with (see ``PushHeaders/effectivePriority``).
    public let priority: APNsPriority
    /// The size of the payload sent to APNs, in bytes.
    public let payloadBytes: Int

    /// The summary of `job`.
    public init(_ job: PushJob) {
        id = job.id
        app = job.app
        environment = job.environment
        audience = job.audience.kind
        switch job.audience {
        case .tokens(let tokens): listedRecipients = tokens.count
        case .openIDs(let openIDs): listedRecipients = openIDs.count
        case .tags, .broadcast, .channel, .activity, .area: listedRecipients = nil
        }
        pushType = job.headers.pushType
        priority = job.headers.effectivePriority
        payloadBytes = job.notification.byteCount
    }

    /// The summary as a JSON object (keys `id`, `app`, `environment`, `audience`,
    /// `listed-recipients`, `push-type`, `priority`, `payload-bytes`; absent values are `null`).
    public var jsonValue: JSONValue {
        [
            "id": id.map(JSONValue.string) ?? .null,
            "app": .string(app),
            "environment": .string(environment.rawValue),
            "audience": .string(audience),
            "listed-recipients": listedRecipients.map { .number(JSONNumber($0)) } ?? .null,
            "push-type": .string(pushType.rawValue),
            "priority": .number(JSONNumber(priority.rawValue)),
            "payload-bytes": .number(JSONNumber(payloadBytes)),
        ]
    }
}
