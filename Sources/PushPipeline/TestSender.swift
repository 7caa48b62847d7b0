public import APNs
public import APNsCore
public import PushConfiguration
public import PushCore

/// Sends a job's notification to a few named devices and returns what APNs answered each: an
/// operator's test on their own device before a campaign (`POST /v1/apps/{app}/push/test`).
///
/// Nothing is recorded: no job, no statistics, no sent markers, no registry change. A device
/// APNs calls unregistered is shown as such and left registered; the next campaign's feedback
/// deals with it under the usual guardrails.
public final class TestSender: Sendable {
    /// The most devices one test send reaches.
    public static let maxDevices = 10

    /// One device of a test send and APNs's answer (or why there was none).
    public struct Result: Sendable {
        public let token: DeviceToken
        public let environment: APNsEnvironment
        public let outcome: Swift.Result<APNsResponse, APNsError>
    }

    private let apns: OnDemandAPNs

    public init(apns: OnDemandAPNs) {
        self.apns = apns
    }

    /// Sends `job`'s notification to each device, in the device's environment, all at once;
    /// the results are in the order of `devices`.
    ///
    /// - Throws: the ``ConfigurationError`` of a credential that cannot be read.
    public func send(
        _ job: PushJob, app settings: AppSettings, to devices: [(token: DeviceToken, environment: APNsEnvironment)]
    ) async throws(ConfigurationError) -> [Result] {
        precondition(devices.count <= Self.maxDevices, "a test send reaches at most \(Self.maxDevices) devices")
        let app = try apns.app(settings)
        let client = apns.client
        return await withTaskGroup(of: (Int, Result).self) { group in
            for (index, device) in devices.enumerated() {
                var deviceJob = job
                deviceJob.environment = device.environment
                let request = deviceJob.apnsRequest(for: app, token: device.token)
                group.addTask {
                    let outcome: Swift.Result<APNsResponse, APNsError>
                    do throws(APNsError) {
                        outcome = .success(try await client.send(request))
                    } catch {
                        outcome = .failure(error)
                    }
                    return (index, Result(token: device.token, environment: device.environment, outcome: outcome))
                }
            }
            var results = [Result?](repeating: nil, count: devices.count)
            for await (index, result) in group {
                results[index] = result
            }
            return results.compactMap { $0 }
        }
    }
}
