public import APNs
public import APNsCore
import NIOCore
import PushConfiguration
public import PushCore

extension PushJob {
    /// The notification this job sends to `token` for `app` in the job's environment: payload,
    /// push type, priority, expiration, collapse id (``collapseID(jobID:)``: a campaign's alerts
    /// share one derived from `jobID`) and topic from the job. Campaigns send it to every device
    /// of a chunk; a test send (no `jobID`) to each device it names.
    public func apnsRequest(for app: PushApp, token: DeviceToken, jobID: String? = nil) -> APNsRequest {
        var request = APNsRequest(
            credential: app.credential(for: environment),
            environment: environment,
            deviceToken: token,
            bundleID: app.settings.bundleID,
            pushType: headers.pushType,
            priority: headers.effectivePriority,
            expiration: headers.expiration.map(Int64.init),
            collapseID: collapseID(jobID: jobID),
            payload: ByteBuffer(bytes: notification.payloadData()))
        if let topic = headers.topic {
            request.topic = topic
        }
        return request
    }
}
