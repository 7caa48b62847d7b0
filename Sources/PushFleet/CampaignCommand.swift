import APNsCore
import ArgumentParser
import Foundation
import PushConfiguration
import PushCore
import PushJobs
import PushStore

/// What a notification says and how it is sent: the options `send` and `campaign` share.
struct NotificationOptions: ParsableArguments {
    @Option(help: "The app id (a key under apps in the configuration).")
    var app: String?

    @Option(help: "sandbox or production (default: the app's first environment).")
    var environment: String?

    @Option(help: "The alert's title.")
    var title: String?

    @Option(help: "The alert's body.")
    var body: String?

    @Option(help: "The sound ('default' or a file name).")
    var sound: String?

    @Option(help: "The badge number.")
    var badge: Int?

    @Option(
        help: ArgumentHelp(
            "Add N to each device's badge, kept by the server: each notification carries the device's new number (openids, tags, broadcast or an area).",
            valueName: "N"))
    var badgeIncrement: Int?

    @Option(help: "apns-push-type (alert, background, voip, …).")
    var pushType: String = "alert"

    @Option(help: "apns-priority: 10, 5 or 1.")
    var priority: Int?

    @Option(help: "apns-collapse-id.")
    var collapseID: String?

    @Option(help: "Send at this time (RFC 3339, e.g. 2026-12-01T09:00:00Z) instead of now.")
    var sendAt: String?

    @Option(help: "Send at this time of each device's day (HH:MM, in its time zone, else the app's), within 24 hours.")
    var localTime: String?

    @Option(help: "Send at each device's best hour within this window (1h to 168h, e.g. 24h).")
    var bestHourWithin: String?

    @Option(help: "A second campaign with the same key for the same app is not sent again.")
    var idempotencyKey: String?

    @Option(help: "What people call the campaign, shown in place of its id (1 to 128 characters).")
    var name: String?

    /// The job as JSON, with a new id and the receipt key in the payload, validated as the
    /// workers will.
    func job(app id: String, audience: JSONValue, session: ClientSession) throws -> PushJob {
        let app = try session.app(id)
        let jobID = UUID().uuidString.lowercased()
        var alert = JSONObject()
        if let title { alert["title"] = .string(title) }
        if let body { alert["body"] = .string(body) }
        var aps = JSONObject()
        if !alert.isEmpty { aps["alert"] = .object(alert) }
        if let sound { aps["sound"] = .string(sound) }
        if badge != nil, badgeIncrement != nil {
            throw ValidationError("--badge and --badge-increment are exclusive: a number for every device, or each device's own")
        }
        if let badge { aps["badge"] = .number(JSONNumber(badge)) }
        if let badgeIncrement { aps["badge"] = ["increment": .number(JSONNumber(badgeIncrement))] }
        if pushType == "background" { aps["content-available"] = .number(JSONNumber(1)) }
        var headers: JSONObject = ["push-type": .string(pushType)]
        if let priority { headers["priority"] = .number(JSONNumber(priority)) }
        if let collapseID { headers["collapse-id"] = .string(collapseID) }
        var object: JSONObject = [
            "id": .string(jobID), "app": .string(app.id),
            "environment": .string(environment ?? app.environments.first?.rawValue ?? "production"),
            "audience": audience,
            "notification": ["aps": .object(aps), JobPublisher.receiptKey: ["job": .string(jobID)]],
            "headers": .object(headers),
        ]
        if [sendAt != nil, localTime != nil, bestHourWithin != nil].filter({ $0 }).count > 1 {
            throw ValidationError("--send-at, --local-time and --best-hour-within are exclusive: one time for the campaign, or each device's own")
        }
        if let sendAt { object["send-at"] = .string(sendAt) }
        if let localTime { object["send-at"] = ["local-time": .string(localTime)] }
        if let bestHourWithin { object["send-at"] = ["best-hour": ["within": .string(bestHourWithin)]] }
        if let idempotencyKey { object["idempotency-key"] = .string(idempotencyKey) }
        if let name { object["name"] = .string(name) }
        do {
            return try PushJob.decodeAndValidate(from: JSONValue.object(object).compactData())
        } catch {
            throw ValidationError("the notification is not valid: \(error.field): \(error.message)")
        }
    }
}

/// Publishes a job and reports it: the job id (or JSON), and with `follow` the live progress
/// and the final statistics. Exit status: 0 published (and, when followed, complete); 3 the
/// job was cancelled; 4 following timed out; 5 the idempotency key belongs to another request;
/// 6 the job was paused (by the circuit breaker or an operator).
enum CampaignRunner {
    static func publish(_ job: PushJob, follow: Bool, timeout: Int?, options: ClientOptions, session: ClientSession) async throws {
        do {
            try job.validateTopic(bundleIDs: try session.app(job.app).topicBundleIDs)
        } catch let error as MessageValidationError {
            throw ValidationError(error.description)
        }
        let jobID: String
        let outcome: JobPublisher.Outcome
        do {
            outcome = try await session.publisher.publish(job)
        } catch let error as JobPublisher.JobTooLarge {
            throw ValidationError(error.description)
        }
        switch outcome {
        case .published(let id):
            jobID = id
            if !options.json { print("▸ job \(id) published to \(PushTopic.jobs)") }
        case .replayed(let id), .conflict(let id):
            jobID = id
            if !options.json { print("▸ idempotency key \(job.idempotencyKey ?? "") was used before: job \(id); nothing published") }
        }
        guard follow else {
            if options.json {
                print(String(decoding: JSONValue.object(["job": .string(jobID), "app": .string(job.app)]).compactData(), as: UTF8.self))
            }
            return
        }
        let follower = JobFollower(jobs: session.jobs, timeout: timeout.map { .seconds($0) }, showProgress: !options.json)
        let (report, end) = try await follower.follow(jobID: jobID, label: String(jobID.prefix(8)))
        if options.json {
            print(String(decoding: report.json(app: job.app).compactData(), as: UTF8.self))
        } else {
            report.lines.forEach { print("    \($0)") }
        }
        switch end {
        case .complete: return
        case .cancelled: throw ExitCode(3)
        case .paused:
            printError(
                "pushfleet: job \(jobID) is paused: \(report.control.reason ?? "no reason given"); decide with `pushfleet jobs resume \(jobID)` or `pushfleet jobs abort \(jobID)`"
            )
            throw ExitCode(6)
        case .timedOut:
            printError("pushfleet: job \(jobID) did not finish within \(timeout ?? 0) s")
            throw ExitCode(4)
        }
    }
}

/// `pushfleet campaign`: a job for any audience.
struct CampaignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "campaign",
        abstract: "Publish a campaign to any audience: broadcast, tags (all/any/none), an area, openids, tokens, or a job file.",
        discussion: "Exit status: 0 published (with --follow: complete), 1 error, 3 cancelled, 4 --timeout reached, 6 paused, 64 usage.")

    @OptionGroup var options: ClientOptions
    @OptionGroup var notification: NotificationOptions

    @Flag(help: "Every device of the app.")
    var broadcast = false

    @Option(name: .customLong("tag-all"), help: "Devices with every one of these tags (repeatable).")
    var tagAll: [String] = []

    @Option(name: .customLong("tag-any"), help: "Devices with at least one of these tags (repeatable).")
    var tagAny: [String] = []

    @Option(name: .customLong("tag-none"), help: "Devices with none of these tags (repeatable).")
    var tagNone: [String] = []

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The devices whose reported location is within KM kilometres of LAT,LON (with --tag-*: those matching the tags too).",
            valueName: "LAT,LON,KM"))
    var area: String?

    @Option(name: .customLong("openid"), help: "A user's openid (repeatable).")
    var openIDs: [String] = []

    @Option(name: .customLong("token"), help: "A device token (repeatable).")
    var tokens: [String] = []

    @Option(help: "A whole job file (JSON, as schemas/push-job.schema.json); replaces the other options.")
    var job: String?

    @Flag(help: "Show live progress until the campaign completes, then its statistics.")
    var follow = false

    @Option(help: "With --follow: give up after this many seconds.")
    var timeout: Int?

    func run() async throws {
        try await ClientSession.with(options, kafka: true) { session in
            let pushJob = try makeJob(session)
            try await CampaignRunner.publish(pushJob, follow: follow, timeout: timeout, options: options, session: session)
        }
    }

    private func makeJob(_ session: ClientSession) throws -> PushJob {
        if let job {
            guard let data = FileManager.default.contents(atPath: job) else {
                throw ValidationError("cannot read job file \(job)")
            }
            var parsed: PushJob
            do {
                parsed = try PushJob.decodeAndValidate(from: data)
            } catch {
                throw ValidationError("\(job): \(error.field): \(error.message)")
            }
            _ = try session.app(parsed.app)
            if parsed.id == nil { parsed.id = UUID().uuidString.lowercased() }
            return parsed
        }
        guard let app = notification.app else {
            throw ValidationError("--app is required (or --job FILE)")
        }
        var audiences: [JSONValue] = []
        if broadcast { audiences.append(["broadcast": true]) }
        var tags: JSONValue?
        if !tagAll.isEmpty || !tagAny.isEmpty || !tagNone.isEmpty {
            var expression = JSONObject()
            if !tagAll.isEmpty { expression["all"] = .array(tagAll.map { .string($0) }) }
            if !tagAny.isEmpty { expression["any"] = .array(tagAny.map { .string($0) }) }
            if !tagNone.isEmpty { expression["none"] = .array(tagNone.map { .string($0) }) }
            tags = .object(expression)
        }
        if let area {
            let parts = area.split(separator: ",", omittingEmptySubsequences: false).map { JSONNumber(text: $0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 3, let latitude = parts[0], let longitude = parts[1], let radius = parts[2] else {
                throw ValidationError("--area must be LAT,LON,KM (three numbers, e.g. 48.8566,2.3522,10), got '\(area)'")
            }
            var selector: JSONObject = ["area": ["lat": .number(latitude), "lon": .number(longitude), "radius-km": .number(radius)]]
            selector["tags"] = tags
            audiences.append(.object(selector))
        } else if let tags {
            audiences.append(["tags": tags])
        }
        if !openIDs.isEmpty { audiences.append(["openids": .array(openIDs.map { .string($0) })]) }
        if !tokens.isEmpty { audiences.append(["tokens": .array(tokens.map { .string($0) })]) }
        guard audiences.count == 1, let audience = audiences.first else {
            throw ValidationError(
                "name exactly one audience: --broadcast, --tag-all/--tag-any/--tag-none, --area (with or without tags), --openid or --token")
        }
        return try notification.job(app: app, audience: audience, session: session)
    }
}

/// `pushfleet send`: one notification to one device or one user.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send one notification to a device token or to a user's openid.",
        discussion: "Exit status: 0 published (with --follow: complete), 1 error, 3 cancelled, 4 --timeout reached, 6 paused, 64 usage.")

    @OptionGroup var options: ClientOptions
    @OptionGroup var notification: NotificationOptions

    @Option(help: "The device token (hex).")
    var token: String?

    @Option(help: "The user's openid (the device it last logged in on).")
    var openid: String?

    @Flag(help: "Wait for the outcome and print it.")
    var follow = false

    @Option(help: "With --follow: give up after this many seconds.")
    var timeout: Int?

    func run() async throws {
        guard let app = notification.app else { throw ValidationError("--app is required") }
        let audience: JSONValue
        switch (token, openid) {
        case (let token?, nil): audience = ["tokens": [.string(token)]]
        case (nil, let openid?): audience = ["openids": [.string(openid)]]
        default: throw ValidationError("give exactly one of --token or --openid")
        }
        try await ClientSession.with(options, kafka: true) { session in
            let job = try notification.job(app: app, audience: audience, session: session)
            try await CampaignRunner.publish(job, follow: follow, timeout: timeout, options: options, session: session)
        }
    }
}
