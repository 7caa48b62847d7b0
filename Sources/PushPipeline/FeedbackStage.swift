import APNs
import APNsCore
import Foundation
import Kafka
import Logging
import NIOCore
import PushConfiguration
import PushCore
import PushJobs
import PushStore
import Tracing

/// Consumes `push.feedback` and changes the registry as ``RegistryChange`` says:
///
/// - 410 (`Unregistered`, `ExpiredToken`): the token is removed (its shard set, tags and openid
///   mapping) unless it was registered again after APNs's timestamp;
/// - `BadDeviceToken`, `DeviceTokenNotForTopic`: the token is never removed; it is kept aside as
///   suspect (no audience reaches it until it binds again or an operator decides), after one
///   try in the app's other environment for `BadDeviceToken` where the app has it: a token
///   APNs accepts there is moved there instead;
/// - any other reason changes nothing.
///
/// Events arrive here only once their job's gate let them through (``HeldEffects``): a job the
/// circuit breaker paused changes nothing. Idempotent: a second event for the same token
/// changes and counts nothing.
struct FeedbackStage: Sendable {
    let outlet: PipelineOutlet
    let registry: DeviceRegistry
    let jobs: JobStore
    /// Whether a device APNs refused is probed in its other environment first
    /// (`registry.probes-other-environment`).
    let probesOtherEnvironment: Bool
    let clients: [String: APNsClient]

    /// The probe's payload: a silent background notification (nothing is shown to the user).
    static let probePayload = Array(#"{"aps":{"content-available":1}}"#.utf8)

    /// Handles one event; `false` when the worker stopped before it finished.
    func handle(_ message: KafkaConsumerMessage) async -> Bool {
        await outlet.handle(message, span: "feedback event", stage: "feedback stage") { span in
            try await process(message, span: span)
        }
    }

    private func process(_ message: KafkaConsumerMessage, span: any Span) async throws {
        let event: FeedbackEvent
        do {
            event = try FeedbackEvent.decode(from: Data(message.value))
        } catch {
            try await outlet.deadLetter(message, invalid: error)
            return
        }
        if span.isRecording {
            span.attributes["pushfleet.app"] = event.app
            span.attributes["pushfleet.feedback-reason"] = event.reason
            span.attributes["pushfleet.job"] = event.jobID ?? ""
        }
        guard let app = outlet.apps[event.app] else {
            try await outlet.deadLetter(message, reason: "unknown-app", text: "app '\(event.app)' is not configured", field: "app", app: event.app)
            return
        }
        let change = RegistryChange(
            reason: event.reason, invalidSince: event.invalidSince, appEnvironments: app.settings.environments,
            // Only a device token is probed: the probe is a background notification, which a
            // VoIP or push-to-start token would refuse whatever its environment.
            // nor over the binary interface, whose gateway answers no probe.
            environment: event.environment,
            probing: probesOtherEnvironment && event.kind == .device && app.settings.transport == .http2)
        switch change {
        case .remove(let invalidSince):
            try await remove(event, invalidSince: invalidSince)
        case .keepAside(let reason):
            try await keepAside(event, reason: reason)
        case .probeOtherEnvironment:
            try await probeOtherEnvironment(event, app: app)
        case .none:
            outlet.counters.add(.feedbackKept)
            outlet.metrics.registryChange(app: event.app, change: "unchanged")
        }
    }

    private func remove(_ event: FeedbackEvent, invalidSince: Int64) async throws {
        let registry = self.registry
        let removed = try await Retrying.run("removing an invalid token of \(event.app)", logger: outlet.logger) {
            try await registry.removeIfNotRegisteredSince(
                app: event.kind.registry(of: event.app), token: event.token, environment: event.environment, invalidSince: invalidSince)
        }
        try await count(removed, event, worker: .feedbackRemoved, job: .removed, change: "removed")
    }

    private func keepAside(_ event: FeedbackEvent, reason: String) async throws {
        let registry = self.registry
        let marked = try await Retrying.run("keeping a token of \(event.app) aside", logger: outlet.logger) {
            try await registry.markSuspect(
                app: event.kind.registry(of: event.app), token: event.token, environment: event.environment, reason: reason, at: event.invalidSince)
        }
        try await count(marked, event, worker: .feedbackKeptAside, job: .suspect, change: "kept-aside")
    }

    /// Tries the token once in the other environment (for a device still registered where APNs
    /// refused it), then moves, removes or keeps it aside as APNs's answer there says.
    private func probeOtherEnvironment(_ event: FeedbackEvent, app: PushApp) async throws {
        let registry = self.registry
        let device = try await Retrying.run("reading a device of \(event.app)", logger: outlet.logger) {
            try await registry.device(app: event.app, token: event.token)
        }
        guard let device, device.environment == event.environment, device.registeredAt <= event.invalidSince, let client = clients[app.id] else {
            try await count(false, event, worker: .feedbackKept, job: nil, change: "unchanged")
            return
        }
        let started = outlet.clock()
        let request = APNsRequest(
            credential: app.credential(for: event.environment.other), environment: event.environment.other, deviceToken: event.token,
            bundleID: app.settings.bundleID,
            pushType: .background, priority: .considerDevicePower, expiration: 0, payload: ByteBuffer(bytes: Self.probePayload))
        let answer: Result<APNsResponse, APNsError>
        do {
            answer = .success(try await client.send(request))
        } catch {
            answer = .failure(error)
        }
        outlet.counters.add(.probes)
        outlet.metrics.registryChange(app: event.app, change: "probed")
        switch ProbeVerdict(answer, now: started) {
        case .move:
            let moved = try await Retrying.run("moving a device of \(event.app) to \(event.environment.other.rawValue)", logger: outlet.logger) {
                try await registry.moveToOtherEnvironment(app: event.app, token: event.token, from: event.environment, at: started)
            }
            try await count(moved, event, worker: .feedbackMoved, job: .movedEnvironment, change: "moved-environment")
        case .remove(let invalidSince):
            try await remove(event, invalidSince: invalidSince)
        case .keepAside:
            try await keepAside(event, reason: event.reason)
        }
    }

    /// Counts a change that happened (`done`) for the worker, the metrics and the job.
    private func count(_ done: Bool, _ event: FeedbackEvent, worker: WorkerCounters.Name, job: JobCounter?, change: String) async throws {
        guard done else {
            outlet.counters.add(.feedbackKept)
            outlet.metrics.registryChange(app: event.app, change: "unchanged")
            return
        }
        outlet.counters.add(worker)
        outlet.metrics.registryChange(app: event.app, change: change)
        if let job, let jobID = event.jobID {
            try await Retrying.run("counting a registry change of job \(jobID)", logger: outlet.logger) {
                try await jobs.increment(jobID: jobID, [job: 1])
            }
        }
    }
}
