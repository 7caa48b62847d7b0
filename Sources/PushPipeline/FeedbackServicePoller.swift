import APNs
import APNsCore
import Logging
import PushConfiguration
import PushCore
import PushJobs
import ServiceLifecycle

/// Reads the legacy feedback service for every app that sends over the binary interface, in
/// each of its environments, every `apns.feedback-interval-seconds`, and publishes each token
/// it lists to `push.feedback` as an `Unregistered` event dated by the service's time: the
/// feedback stage then removes the token unless it was registered again after that time.
struct FeedbackServicePoller: Sendable {
    let outlet: PipelineOutlet
    /// How often each app's feedback service is read (`apns.feedback-interval`).
    let interval: Duration
    let clients: [String: APNsClient]

    func run() async {
        let apps = outlet.apps.values.filter { $0.settings.transport == .binary }.sorted { $0.id < $1.id }
        guard !apps.isEmpty else { return }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            for app in apps {
                for environment in app.settings.environments {
                    await poll(app, environment: environment)
                }
            }
            try? await cancelWhenGracefulShutdown {
                try await Task.sleep(for: interval)
            }
        }
    }

    private func poll(_ app: PushApp, environment: APNsEnvironment) async {
        guard let client = clients[app.id] else { return }
        do {
            let tuples = try await client.readFeedbackService(credential: app.credential(for: environment), environment: environment)
            let events = Self.events(tuples, app: app.id, environment: environment)
            try await outlet.publish(events.map(HeldEffects.message), "\(events.count) feedback-service token(s) of app \(app.id)")
            outlet.logger.info(
                "feedback service read", metadata: ["app": "\(app.id)", "environment": "\(environment.rawValue)", "tokens": "\(events.count)"])
        } catch {
            outlet.logger.warning(
                "reading the feedback service failed; trying again at the next interval",
                metadata: ["app": "\(app.id)", "environment": "\(environment.rawValue)", "error": "\(error)"])
        }
    }

    /// The events the service's tuples call for: each token `Unregistered` since the tuple's
    /// time (seconds, made milliseconds).
    static func events(_ tuples: [(time: Int64, token: DeviceToken)], app: String, environment: APNsEnvironment) -> [FeedbackEvent] {
        tuples.map { tuple in
            FeedbackEvent(
                app: app, token: tuple.token, environment: environment, reason: APNsReason.unregistered.rawValue,
                invalidSince: tuple.time * 1000, jobID: nil)
        }
    }
}
