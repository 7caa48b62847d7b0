import APNsCore
import Logging
import NIOCore
import PushCore
import PushStore

/// The badges of a campaign whose `aps.badge` is a rule (``BadgeRule``): which device each
/// delivery goes to, and each device's payload with its number, counted once per job and device
/// (``BadgeStore/apply(_:app:jobID:devices:)``) just before the notifications go to APNs.
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

    /// The payloads of deliveries `range`, each with its device's number after the job's rule.
    func payloads(_ range: Range<Int>, app: String, jobID: String, logger: Logger) async throws -> [ByteBuffer] {
        let ids = devices[range]
        let known = ids.compactMap { $0 }
        let numbers = try await Retrying.run("counting \(known.count) badge(s) of job \(jobID)", logger: logger) {
            try await store.apply(rule, app: app, jobID: jobID, devices: known)
        }
        var next = numbers.makeIterator()
        return ids.map { id in
            guard id != nil, let number = next.next() else { return payload.withoutBadge }
            return payload.payload(badge: number)
        }
    }
}
