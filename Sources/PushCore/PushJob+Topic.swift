public import APNsCore

extension PushJob {
    /// The `apns-topic` the job's notifications go out with: its `headers.topic`, or else the
    /// app's bundle id with the push type's suffix.
    public func topic(bundleID: String) -> String {
        headers.topic ?? headers.pushType.topic(forBundleID: bundleID)
    }

    /// Checks the job's `headers.topic` against its app: it must be one of the app's bundle ids
    /// (the first is the app's own, the others its configured extra topics) with the suffix
    /// APNs requires for the push type (`.voip`, `.complication`, `.push-type.liveactivity`, …).
    /// A topic that is wrong for its app or push type is refused by APNs for every device
    /// (`BadTopic`, `TopicDisallowed`, `DeviceTokenNotForTopic`), so it is refused here first.
    ///
    /// - Throws: ``MessageValidationError`` naming `headers.topic` with code
    ///   ``MessageValidationError/Code/topicNotAllowed``, listing the topics allowed.
    public func validateTopic(bundleIDs: [String]) throws(MessageValidationError) {
        guard let topic = headers.topic else { return }
        let allowed = bundleIDs.map(headers.pushType.topic(forBundleID:))
        guard !allowed.contains(topic) else { return }
        let list = allowed.map { "'\($0)'" }.joined(separator: ", ")
        throw MessageValidationError(
            field: "headers.topic", code: .topicNotAllowed,
            message:
                "'\(topic)' is not a topic of app '\(app)' for \(headers.pushType) pushes; use \(allowed.count == 1 ? "" : "one of ")\(list), or leave it out"
        )
    }

    /// Whether the job goes out with its app's own topic for its push type (its bundle id with
    /// the push type's suffix), rather than an extra topic.
    public func usesOwnTopic(bundleID: String) -> Bool {
        topic(bundleID: bundleID) == headers.pushType.topic(forBundleID: bundleID)
    }
}
