import APNsCore
import Kafka
import PushCore
import PushStore

/// Which of an online-first chunk's first sends go over the online channel, and through which
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
}

/// The send stage's first step for an online-first chunk: looks up its devices' presence (one
/// read per presence bucket, ``PresenceStore/lookup(app:tokens:)``) and hands the sends of the
/// connected ones to their gateways; answers the rest, for APNs. A send handed over is first
/// an entry of the resend buffer, due after ``GatewaySettings/fallbackDelay`` (twice the ack
/// timeout), then has its sent marker (counted `online-sent`), then goes to `push.online` in one
/// chunk per gateway, keyed by its id. From then on it ends once: the gateway that gets the ack
/// completes the entry (`online`), or hands it back (due now) when the app did not ack, and when
/// the gateway died the entry falls due by itself; the resend drainer then sends it through APNs.
/// A worker that dies between the steps leaves the entry, so nothing is lost. Resends never
/// take this way.
struct OnlineRouter: Sendable {
    let outlet: PipelineOutlet
    let presence: PresenceStore
    let jobs: JobStore
    let resend: ResendBuffer
    /// How long a send handed over waits in the resend buffer before APNs takes it.
    let fallbackDelay: Duration

    func route(_ pending: [Delivery], of chunk: DeliveryChunk) async throws -> [Delivery] {
        guard chunk.job.delivery == .onlineFirst, !pending.isEmpty else { return pending }
        let tokens = pending.map(\.token)
        let (app, jobID) = (chunk.job.app, chunk.jobID)
        let (presence, jobs, resend) = (self.presence, self.jobs, self.resend)
        let records = try await Retrying.run("looking up the presence of \(tokens.count) device(s) of job \(jobID)", logger: outlet.logger) {
            try await presence.lookup(app: app, tokens: tokens)
        }
        let split = OnlineRouting.split(tokens, presence: records)
        guard !split.online.isEmpty else { return pending }
        let handedOver = split.online.flatMap(\.indexes).map { pending[$0] }
        let now = outlet.clock()
        let entries = handedOver.map {
            ResendFailure(jobID: jobID, token: $0.token, attempts: 0, firstFailedAt: now, reason: "online", retryAfter: fallbackDelay)
        }
        _ = try await Retrying.run("buffering \(entries.count) online send(s) of job \(jobID)", logger: outlet.logger) {
            try await resend.schedule(app: app, entries)
        }
        let marks = handedOver.map { DeliveryOutcomeRecord(position: $0.position ?? 0, counter: .onlineSent, countsAsSent: false) }
        _ = try await Retrying.run("marking \(marks.count) online send(s) of job \(jobID)", logger: outlet.logger) {
            try await jobs.recordOutcomes(jobID: jobID, marks)
        }
        let messages = split.online.map { gateway, indexes in
            let part = DeliveryChunk(
                job: chunk.job, chunkID: chunk.chunkID, tokens: indexes.map { pending[$0].token },
                positions: indexes.map { pending[$0].position ?? 0 }, addressedTags: chunk.addressedTags)
            return KafkaProducerMessage(topic: PushTopic.online, key: Array(gateway.utf8), value: Array(part.jsonData()))
        }
        try await outlet.publish(messages, "online sends of job \(jobID)")
        outlet.counters.add(.routedOnline, handedOver.count)
        return split.apns.map { pending[$0] }
    }
}
