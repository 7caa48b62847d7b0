import APNsCore
import Foundation
import Logging
import PushConfiguration
import PushCore
import PushStore
import ServiceLifecycle

/// Sends the resend buffer's due entries again: claims them app by app (a claim is a lease, so
/// entries of a worker that dies come back), looks up each job's stored payload, and settles the
/// outcomes like first sends. Apps whose sending is suspended are left alone, and so are the
/// entries of a paused job (their claim runs out and they come back). Runs until graceful
/// shutdown; a round in progress finishes first.
struct ResendDrainer: Sendable {
    let outlet: PipelineOutlet
    let resend: ResendBuffer
    let suspensions: SuspensionCache
    let jobs: JobStore
    /// How often each app's buffer is read (`worker.resend-poll-interval`).
    let pollInterval: Duration
    let sender: NotificationSender
    /// Entries claimed per app and round.
    var batchSize = 500

    func run() async {
        let poll = pollInterval
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            var drained = 0
            for app in outlet.apps.values.sorted(by: { $0.id < $1.id }) {
                do {
                    drained += try await drain(app)
                } catch {
                    outlet.logger.warning("resend round failed", metadata: ["app": "\(app.id)", "error": "\(error)"])
                }
            }
            if drained == 0 {
                try? await cancelWhenGracefulShutdown {
                    try await Task.sleep(for: poll)
                }
            }
        }
    }

    /// One round for one app; returns the entries it handled.
    func drain(_ app: PushApp) async throws -> Int {
        outlet.metrics.resendDepth(app: app.id, try await resend.depth(app: app.id))
        // Suspended everywhere: nothing it claimed could be sent. Suspended in one environment
        // only: that environment's entries go back to the buffer (not sent) when claimed.
        var suspended = 0
        for environment in app.settings.environments where try await suspensions.reason(app: app.id, environment: environment) != nil {
            suspended += 1
        }
        if suspended == app.settings.environments.count { return 0 }
        // Outcomes whose completer died before counting them are counted first.
        _ = try await completion.recoverTallies(app: app.id)
        let entries = try await resend.claimDue(app: app.id, limit: batchSize)
        guard !entries.isEmpty else { return 0 }
        var byJob: [String: [ResendEntry]] = [:]
        for entry in entries {
            byJob[entry.jobID, default: []].append(entry)
        }
        for (jobID, jobEntries) in byJob {
            guard let json = try await jobs.spec(jobID: jobID), let job = try? PushJob.decodeAndValidate(from: Data(json)) else {
                try await giveUp(jobEntries, app: app, jobID: jobID)
                continue
            }
            if job.delivery == .onlineOnly {
                try await keepInInboxes(jobEntries, app: app, jobID: jobID)
                continue
            }
            try await sender.deliver(jobEntries.map { Delivery(resending: $0) }, of: job, jobID: jobID, app: app, tags: job.audience.addressedTags)
        }
        return entries.count
    }

    /// An online-only job's sends that no gateway saw acknowledged: never APNs; their messages
    /// stay in the devices' inboxes (kept there when they were sent), so each ends `inboxed`,
    /// counted by whoever completes its entry first.
    private func keepInInboxes(_ entries: [ResendEntry], app: PushApp, jobID: String) async throws {
        let removed = try await completion.complete(app: app.id, jobID: jobID, entries, counting: entries.map { _ in [.inboxed] })
        outlet.counters.add(.inboxed, removed.count(where: { $0 }))
    }

    /// The job's payload is gone (expired or never stored): nothing to send, so dead-letter.
    private func giveUp(_ entries: [ResendEntry], app: PushApp, jobID: String) async throws {
        let now = outlet.clock()
        let letters = entries.map {
            DeadLetter(
                reason: "job-spec-missing", message: "the job's payload is no longer stored; cannot send again",
                app: app.id, jobID: jobID, token: $0.token.hex, attempts: $0.attempts, deadLetteredAt: now)
        }
        try await outlet.deadLetterNotifications(letters, jobID: jobID)
        _ = try await completion.complete(app: app.id, jobID: jobID, entries, counting: entries.map { _ in [.deadLettered] })
    }

    private var completion: ResendCompletion { ResendCompletion(resend: resend, jobs: jobs, logger: outlet.logger) }
}
