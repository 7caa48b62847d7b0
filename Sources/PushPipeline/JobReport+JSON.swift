public import PushCore

extension JobReport {
    /// The report as the API's `JobStatus` object and `--json` output: job, app, state and every
    /// figure (`schemas/openapi.yaml`, `JobStatus`).
    public func json(app: String) -> JSONValue {
        func number(_ value: Int) -> JSONValue { .number(JSONNumber(value)) }
        var reasons = JSONObject()
        for reason in failedByReason.keys.sorted() {
            reasons[reason] = number(failedByReason[reason] ?? 0)
        }
        return [
            "job": .string(jobID), "app": .string(app), "state": .string(state),
            "targeted": number(targeted), "expanded": number(expanded), "sent": number(sent),
            "accepted": number(accepted), "failed": number(failed), "failed-by-reason": .object(reasons),
            "invalid-tokens": number(invalidTokens), "removed": number(removed), "retried": number(retried),
            "dead-lettered": number(deadLettered), "cancelled": number(cancelled),
            "delivered": number(delivered), "opened": number(opened),
            "scheduled-at": scheduledAt.map(number) ?? .null,
        ]
    }
}
