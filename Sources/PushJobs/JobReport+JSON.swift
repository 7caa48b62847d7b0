import PushCore
import PushStore

extension JobReport {
    /// The report as the API's `JobStatus` object and `--json` output: job, app, state, why it
    /// stopped (paused or cancelled), its breaker and operator rate, and every figure
    /// (`schemas/openapi.yaml`, `JobStatus`).
    package func json(app: String) -> JSONValue {
        func number(_ value: Int) -> JSONValue { .number(JSONNumber(value)) }
        var reasons = JSONObject()
        for reason in failedByReason.keys.sorted() {
            reasons[reason] = number(failedByReason[reason] ?? 0)
        }
        var reason: JSONValue = .null
        if control.state != .running, let text = control.reason {
            reason = [
                "reason": .string(text), "by": control.pausedBy.map { .string($0.rawValue) } ?? .null,
                "at": control.changedAt.map { .number(JSONNumber(Int($0))) } ?? .null,
            ]
        }
        return [
            "job": .string(jobID), "name": name.map(JSONValue.string) ?? .null, "app": .string(app), "state": .string(state.rawValue),
            "delivery": .string(delivery.rawValue),
            "stopped": reason,
            "breaker": .string(control.breaker.rawValue),
            "rate-per-second": control.ratePerSecond.flatMap { JSONNumber($0) }.map(JSONValue.number) ?? .null,
            "targeted": number(targeted), "expanded": number(expanded), "sent": number(sent),
            "accepted": number(accepted), "online": number(online), "online-sent": number(onlineSent), "inboxed": number(inboxed),
            "inbox-read": number(inboxRead), "failed": number(failed),
            "failed-by-reason": .object(reasons),
            "invalid-tokens": number(invalidTokens), "unregistered": number(unregistered), "removed": number(removed),
            "suspect": number(suspect), "moved-environment": number(movedEnvironment),
            "effects-discarded": number(effectsDiscarded), "retried": number(retried),
            "dead-lettered": number(deadLettered), "cancelled": number(cancelled),
            "delivered": number(delivered), "opened": number(opened),
            "scheduled-at": scheduledAt.map(number) ?? .null,
            "send-times": .array(
                sendTimes.map { ["at": number(Int($0.at)), "scheduled": number($0.scheduled), "released": number($0.released)] }),
            "recall-of": recallOf.map(Self.json) ?? .null, "recalled-by": recalledBy.map(Self.json) ?? .null,
        ]
    }

    private static func json(_ link: JobStore.RecallLink) -> JSONValue {
        ["job": .string(link.jobID), "mode": .string(link.mode.rawValue)]
    }
}
