import APNsCore

extension PushJob {
    /// The `apns-collapse-id` of this job's notifications: the producer's own
    /// (`headers.collapse-id`) when set; else, for an alert of a job that has not opted out
    /// (``collapseByJob``), one derived from the job's id, so that every copy of the job's
    /// notification on a device collapses into one. A worker that dies can leave up to its
    /// in-flight window sent and unsettled, which the next owner sends again; with a shared
    /// collapse id the device shows the second copy in place of the first, not beside it.
    ///
    /// Derived: the job id itself when it fits APNs's 64 bytes, else `pf-` and the id's 64-bit
    /// FNV-1a hash in hex (stable across processes and releases, so a later request can name
    /// the same notification). `nil` for other push types (nothing is shown, or a Live Activity's
    /// own id rules) and when `jobID` is `nil` (a test send).
    public func collapseID(jobID: String?) -> String? {
        if let own = headers.collapseID { return own }
        guard collapseByJob, headers.pushType == .alert, let jobID, !jobID.isEmpty else { return nil }
        if jobID.utf8.count <= PushHeaders.maxCollapseIDBytes { return jobID }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in jobID.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "pf-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
