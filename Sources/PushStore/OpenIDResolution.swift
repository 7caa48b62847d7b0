import APNsCore

/// The devices a list of openids resolves to in one APNs environment.
package struct OpenIDResolution: Hashable, Sendable {
    /// The device each openid last logged in on, for the openids whose device is registered in
    /// the requested environment; in the order of the (de-duplicated) openids.
    package var tokens: [DeviceToken]
    /// The device id of each token (the position of its sent state in a job).
    package var ids: [UInt32]
    /// Openids with no device: never bound, logged out, or uninstalled.
    package var unknownCount: Int
    /// Openids whose device is registered in the other environment (not reachable by this job).
    package var otherEnvironmentCount: Int
    /// Openids whose device is kept aside as suspect (not sent to).
    package var suspectCount: Int

    package init(tokens: [DeviceToken], ids: [UInt32] = [], unknownCount: Int, otherEnvironmentCount: Int, suspectCount: Int = 0) {
        self.tokens = tokens
        self.ids = ids
        self.unknownCount = unknownCount
        self.otherEnvironmentCount = otherEnvironmentCount
        self.suspectCount = suspectCount
    }

    /// ``tokens`` and ``ids`` ordered by id, the order a job publishes them in: a chunk of
    /// neighbouring ids touches a few ranges of the job's sent state (``DeviceIDForm``), where
    /// the openids' order would spread every chunk over all of them.
    package var byID: (tokens: [DeviceToken], ids: [UInt32]) {
        let order = ids.indices.sorted { ids[$0] < ids[$1] }
        return (order.map { tokens[$0] }, order.map { ids[$0] })
    }
}
