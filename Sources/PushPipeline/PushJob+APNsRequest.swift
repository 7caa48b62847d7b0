public import APNs
public import APNsCore
import NIOCore
import PushConfiguration
public import PushCore

extension PushJob {
    /// The notification this job sends to `token` for `app` in the job's environment: payload,
    /// push type, priority, expiration, collapse id and topic from the job. Campaigns send it to
    /// every device of a chunk; a test send to each device it names.
    public func apnsRequest(for app: PushApp, token: DeviceToken) -> APNsRequest {
        var request = APNsRequest(
            credential: app.credential(for: environment),
            environment: environment,
            deviceToken: token,
            bundleID: app.settings.bundleID,
            pushType: headers.pushType,
            priority: headers.effectivePriority,
            expiration: headers.expiration.map(Int64.init),
            collapseID: headers.collapseID,
            payload: ByteBuffer(bytes: notification.payloadData()))
        if let topic = headers.topic {
            request.topic = topic
        }
        return request
    }
}
