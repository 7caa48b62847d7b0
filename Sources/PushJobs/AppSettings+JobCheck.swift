import APNsCore
public import PushConfiguration
public import PushCore

extension AppSettings {
    /// Checks a valid job against its app's configuration, as the API and `pushfleet job
    /// validate --config` do before publishing and a worker does before expanding: the app is
    /// enabled for the job's environment, and the job's `headers.topic` (if any) is one of the
    /// app's topics for its push type.
    ///
    /// - Throws: ``MessageValidationError`` naming `environment` or `headers.topic`.
    public func check(_ job: PushJob) throws(MessageValidationError) {
        guard environments.contains(job.environment) else {
            let enabled = environments.map(\.rawValue).joined(separator: ", ")
            throw MessageValidationError(
                field: "environment", code: .invalidValue, message: "app '\(id)' is not enabled for \(job.environment.rawValue) (enabled: \(enabled))"
            )
        }
        try job.validateTopic(bundleIDs: topicBundleIDs)
    }
}
