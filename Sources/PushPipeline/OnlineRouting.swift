import APNsCore
import FlowControl
import Kafka
import PushCore
import PushStore

/// Which of an online chunk's first sends go over the online channel, and through which
/// gateway: a device with a presence record goes to the gateway the record names, every other
/// one to APNs. Pure.
enum OnlineRouting {
    /// A chunk's sends split by way out: indexes into the sends, in their order.
    struct Split: Equatable, Sendable {
        /// The sends each gateway holds a connection for, by gateway id (sorted).
        var online: [(gateway: String, indexes: [Int])]
        /// The sends for APNs.
        var apns: [Int]

        static func == (left: Split, right: Split) -> Bool {
            left.apns == right.apns && left.online.map(\.gateway) == right.online.map(\.gateway)
                && left.online.map(\.indexes) == right.online.map(\.indexes)
        }
    }

    /// Splits `tokens` by their `presence`.
    static func split(_ tokens: [DeviceToken], presence: [DeviceToken: PresenceRecord]) -> Split {
        var byGateway: [String: [Int]] = [:]
        var apns: [Int] = []
        for (index, token) in tokens.enumerated() {
            if let record = presence[token] {
                byGateway[record.gateway, default: []].append(index)
            } else {
                apns.append(index)
            }
        }
        return Split(online: byGateway.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, apns: apns)
    }

    /// When an online-only job's messages leave the inboxes (ms since 1970): the job's
    /// `expiration` (UNIX seconds), at most `timeToLive` from `now`; `timeToLive` from `now`
    /// when it has none (or 0). `nil` when its expiration has passed: nothing is kept.
    static func inboxExpiry(expiration: Int?, now: Int64, timeToLive: Duration) -> Int64? {
        let longest = now + timeToLive.roundedUpMilliseconds
        guard let expiration, expiration > 0 else { return longest }
        let (milliseconds, overflow) = Int64(expiration).multipliedReportingOverflow(by: 1_000)
        let expiry = overflow ? longest : min(milliseconds, longest)
        return expiry > now ? expiry : nil
    }
}

/// The send stage's first step for a chunk of an online-first or online-only job: looks up its
/// devices' presence (one read per presence bucket, ``PresenceStore/lookup(app:tokens:)``) and
/// hands the sends of the connected ones to their gateways; answers the rest, for APNs (none for
/// online-only). A send handed over is first an entry of the resend buffer, due after
/// ``GatewaySettings/fallbackDelay`` (twice the ack timeout), then has its sent marker (counted
/// `online-sent`), then goes to `push.online` in one chunk per gateway, keyed by its id. From then
/// on it ends once: the gateway that gets the ack completes the entry (`online`), or hands it
/// back (due now) when the app did not ack, and when the gateway died the entry falls due by
/// itself; the resend drainer then sends it through APNs (online-first) or counts it `inboxed`
/// (online-only). An online-only chunk's messages are kept in every device's inbox before
/// anything else (``InboxStore``), and the devices not connected are counted `inboxed` at once.
/// A worker that dies between the steps leaves the entries, so nothing is lost. Resends never
/// take this way.
struct OnlineRouter: Sendable {
    let outlet: PipelineOutlet
    let presence: PresenceStore
    let jobs: JobStore
    let resend: ResendBuffer
    let inbox: InboxStore
    /// How long a send handed over waits in the resend buffer before APNs takes it.
    let fallbackDelay: Duration
    /// Most messages per device inbox (`gateway.inbox-size`).
    let inboxSize: Int
    /// How long an inbox keeps a message at most (`gateway.inbox-ttl-seconds`).
    let inboxTimeToLive: Duration

    func route(_ pending: [Delivery], of chunk: DeliveryChunk) async throws -> [Delivery] {
        let delivery = chunk.job.delivery
        guard delivery.usesOnlineChannel, !pending.isEmpty else { return pending }
        let onlineOnly = delivery == .onlineOnly
        if onlineOnly, try await !keepInInboxes(pending, of: chunk) { return [] }
        let tokens = pending.map(\.token)
        let (app, jobID) = (chunk.job.app, chunk.jobID)
        let (presence, resend) = (self.presence, self.resend)
        let records = try await Retrying.run("looking up the presence of \(tokens.count) device(s) of job \(jobID)", logger: outlet.logger) {
            try await presence.lookup(app: app, tokens: tokens)
        }
        let split = OnlineRouting.split(tokens, presence: records)
        if onlineOnly {
            try await mark(split.apns.map { pending[$0] }, .inboxed, of: jobID)
            outlet.counters.add(.inboxed, split.apns.count)
        }
        guard !split.online.isEmpty else { return onlineOnly ? [] : pending }
        let handedOver = split.online.flatMap(\.indexes).map { pending[$0] }
        let now = outlet.clock()
        let entries = handedOver.map {
            ResendFailure(jobID: jobID, token: $0.token, attempts: 0, firstFailedAt: now, reason: "online", retryAfter: fallbackDelay)
        }
        _ = try await Retrying.run("buffering \(entries.count) online send(s) of job \(jobID)", logger: outlet.logger) {
            try await resend.schedule(app: app, entries)
        }
        try await mark(handedOver, .onlineSent, of: jobID)
        let messages = split.online.map { gateway, indexes in
            let part = DeliveryChunk(
                job: chunk.job, chunkID: chunk.chunkID, tokens: indexes.map { pending[$0].token },
                positions: indexes.map { pending[$0].position ?? 0 }, addressedTags: chunk.addressedTags)
            return KafkaProducerMessage(topic: PushTopic.online, key: Array(gateway.utf8), value: Array(part.jsonData()))
        }
        try await outlet.publish(messages, "online sends of job \(jobID)")
        outlet.counters.add(.routedOnline, handedOver.count)
        return onlineOnly ? [] : split.apns.map { pending[$0] }
    }

    /// Sets the sent markers of `deliveries`, counting each once under `counter`.
    private func mark(_ deliveries: [Delivery], _ counter: JobCounter, of jobID: String) async throws {
        guard !deliveries.isEmpty else { return }
        let jobs = self.jobs
        let marks = deliveries.map { DeliveryOutcomeRecord(position: $0.position ?? 0, counter: counter, countsAsSent: false) }
        _ = try await Retrying.run("marking \(marks.count) online send(s) of job \(jobID)", logger: outlet.logger) {
            try await jobs.recordOutcomes(jobID: jobID, marks)
        }
    }

    /// Keeps an online-only chunk's messages in their devices' inboxes; `false` when the job's
    /// expiration has passed, its sends then dead-lettered (`expired`).
    private func keepInInboxes(_ pending: [Delivery], of chunk: DeliveryChunk) async throws -> Bool {
        let (app, jobID) = (chunk.job.app, chunk.jobID)
        let now = outlet.clock()
        guard let expiry = OnlineRouting.inboxExpiry(expiration: chunk.job.headers.expiration, now: now, timeToLive: inboxTimeToLive) else {
            let letters = pending.map {
                DeadLetter(
                    reason: "expired", message: "the job's expiration passed before it was sent; an online-only job keeps nothing past it",
                    app: app, jobID: jobID, token: $0.token.hex, attempts: 0, deadLetteredAt: now)
            }
            try await outlet.deadLetterNotifications(letters, jobID: jobID)
            try await mark(pending, .deadLettered, of: jobID)
            return false
        }
        let (inbox, capacity) = (self.inbox, inboxSize)
        let messages = pending.map { (token: $0.token, message: InboxMessage(jobID: jobID, position: $0.position ?? 0)) }
        let dropped = try await Retrying.run("keeping \(messages.count) message(s) of job \(jobID) in inboxes", logger: outlet.logger) {
            try await inbox.keep(app: app, messages, expiresAt: expiry, capacity: capacity)
        }
        outlet.counters.add(.inboxDropped, dropped)
        return true
    }
}
