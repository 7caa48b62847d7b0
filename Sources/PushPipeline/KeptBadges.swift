import APNsCore
import Logging
import NIOCore
import PushCore
import PushStore

/// The badges of a campaign whose `aps.badge` is a rule (``BadgeRule``): which device each
/// delivery goes to, and each device's payload with its number, counted once per job and device
/// (``BadgeStore/apply(_:app:jobID:devices:)``) when a chunk's first batch is admitted, and taken
/// back for what the chunk then did not send.
struct KeptBadges: Sendable {
    let rule: BadgeRule
    let payload: BadgedPayload
    let store: BadgeStore
    /// The device id of each delivery (in order): its position for a first send (a job with a
    /// kept badge goes to registered devices, whose positions are their ids), the registry's
    /// for a resend; `nil` for a token no longer registered, which gets no badge.
    let devices: [UInt32?]

    /// The kept badges of `job`'s `deliveries`; `nil` when its badge is a number or absent.
    static func of(
        _ job: PushJob, deliveries: [Delivery], app: String, store: BadgeStore, registry: DeviceRegistry, logger: Logger
    ) async throws -> KeptBadges? {
        guard let rule = job.notification.badgeRule, let payload = BadgedPayload(job.notification) else { return nil }
        var devices = deliveries.map(\.position)
        let resent = deliveries.indices.filter { deliveries[$0].position == nil }
        if !resent.isEmpty {
            let tokens = resent.map { deliveries[$0].token }
            let ids = try await Retrying.run("reading the device ids of \(tokens.count) resend(s) of app \(app)", logger: logger) {
                try await registry.deviceIDs(app: app, tokens: tokens)
            }
            for (index, id) in zip(resent, ids) { devices[index] = id }
        }
        return KeptBadges(rule: rule, payload: payload, store: store, devices: devices)
    }

    /// The badges a chunk counted: each delivery's payload from `start` on, and which devices
    /// this count reached first (what ``revoke(_:from:app:jobID:logger:)`` may take back).
    struct Counted: Sendable {
        let start: Int
        let payloads: [ByteBuffer]
        let counted: [Bool]

        /// The payloads of deliveries `range` (within the counted ones).
        func payloads(_ range: Range<Int>) -> [ByteBuffer] {
            Array(payloads[(range.lowerBound - start)..<(range.upperBound - start)])
        }
    }

    /// Counts the badges of deliveries `range` (the rest of a chunk, once its first batch is
    /// admitted: one script per range of ids for the chunk, not for each of its batches) and
    /// answers their payloads, each with its device's number after the job's rule.
    func count(_ range: Range<Int>, app: String, jobID: String, logger: Logger) async throws -> Counted {
        let ids = devices[range]
        let known = ids.compactMap { $0 }
        let applied = try await Retrying.run("counting \(known.count) badge(s) of job \(jobID)", logger: logger) {
            try await store.apply(rule, app: app, jobID: jobID, devices: known)
        }
        var next = applied.makeIterator()
        var payloads: [ByteBuffer] = []
        var counted: [Bool] = []
        payloads.reserveCapacity(ids.count)
        counted.reserveCapacity(ids.count)
        for id in ids {
            guard id != nil, let device = next.next() else {
                payloads.append(payload.withoutBadge)
                counted.append(false)
                continue
            }
            payloads.append(payload.payload(badge: device.badge))
            counted.append(device.counted)
        }
        return Counted(start: range.lowerBound, payloads: payloads, counted: counted)
    }

    /// Takes back the counts of `counted` from delivery `index` on: the chunk stopped there, and
    /// its notifications from there on were not handed to APNs (a later send counts them again).
    func revoke(_ counted: Counted, from index: Int, app: String, jobID: String, logger: Logger) async throws {
        let end = counted.start + counted.payloads.count
        let devices = (max(index, counted.start)..<end).compactMap { counted.counted[$0 - counted.start] ? self.devices[$0] : nil }
        guard !devices.isEmpty else { return }
        try await Retrying.run("taking back \(devices.count) badge count(s) of job \(jobID)", logger: logger) {
            try await store.revoke(rule, app: app, jobID: jobID, devices: devices)
        }
    }
}
