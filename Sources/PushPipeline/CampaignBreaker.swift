import PushConfiguration
import PushJobs

/// The campaign circuit breaker's judgement of a watched job (``JobControl/Breaker/watching``)
/// from its statistics so far: a rule in a value type, fed by the send stage after each batch
/// it settles.
///
/// A campaign whose configuration is wrong (a sandbox token registry sent to production, a
/// topic of another app) gets the same token rejection for nearly every device; one that is
/// right gets a few. So: once ``BreakerSettings/minNotifications`` notifications have a final
/// outcome, more than ``BreakerSettings/maxRejectedShare`` of them rejected (`BadDeviceToken`,
/// `DeviceTokenNotForTopic`, or a refusal Apple does not document) trips the breaker; a job
/// that stays below it until ``BreakerSettings/watchNotifications`` outcomes, or finishes, is
/// cleared. 410s do not count: they say the token is gone, which no configuration causes.
/// (Refusals of the whole request trip a job at once, without this judgement:
/// ``Settlement/Plan/pauseJob``.)
struct CampaignBreaker: Sendable {
    enum Verdict: Equatable, Sendable {
        /// Not enough answers yet.
        case watching
        /// The answers look like a sound campaign: apply its registry changes.
        case clear
        /// The answers look like a misconfiguration: pause the job, for this reason.
        case trip(reason: String)
    }

    var settings: BreakerSettings

    func verdict(_ report: JobReport) -> Verdict {
        let judged = report.sent
        let rejected = report.rejectedByReason.values.reduce(0, +)
        if judged >= settings.minNotifications, Double(rejected) > settings.maxRejectedShare * Double(judged) {
            let reasons = report.rejectedByReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let percent = Int((100 * Double(rejected) / Double(judged)).rounded())
            let allowed = Int((100 * settings.maxRejectedShare).rounded())
            return .trip(
                reason:
                    "circuit breaker: \(rejected) of the first \(judged) answers (\(percent)%) rejected the device token (\(reasons)); at most \(allowed)% is expected of a sound campaign"
            )
        }
        if judged >= settings.watchNotifications || report.isComplete {
            return .clear
        }
        return .watching
    }
}
