import Dispatch
import FlowControl
import Foundation
import Logging
import PushPipeline
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Carries out ``ProcessStop`` for a long-running process: runs its service group, turns the
/// first SIGTERM or SIGINT into a graceful shutdown, cancels the work still running at the
/// shutdown deadline, and ends the process with status 75 if that work has not given way within
/// the allowance after it (instead of ServiceLifecycle's fatal error at its own cancellation
/// timeout, which is a crash).
///
/// The deadline and the allowance are timed on a dispatch queue of their own, not on Swift's
/// cooperative pool: they must fire even when something holds every thread of that pool.
final class ProcessStopController: Sendable {
    private let machine: Mutex<ProcessStop>
    private let timers = DispatchQueue(label: "pushfleet.process-stop")
    private let logger: Logger
    /// What the process is in the middle of, for the logs of a stop at the deadline.
    private let unfinishedWork: @Sendable () -> Logger.Metadata

    init(deadline: Duration, allowance: Duration = .seconds(5), logger: Logger, unfinishedWork: @escaping @Sendable () -> Logger.Metadata) {
        self.machine = Mutex(ProcessStop(deadline: deadline, allowance: allowance))
        self.logger = logger
        self.unfinishedWork = unfinishedWork
    }

    /// Runs `services` until they return (after a stop signal, or on their own); answers the
    /// status the process exits with. Throws what a service threw.
    func run(_ services: [any Service]) async throws -> ProcessStop.ExitStatus {
        var configuration = ServiceGroupConfiguration(services: services.map { .init(service: $0) }, logger: logger)
        // The deadline and the cancellation allowance are this controller's.
        configuration.maximumGracefulShutdownDuration = nil
        configuration.maximumCancellationDuration = nil
        let group = ServiceGroup(configuration: configuration)
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let groupTask = Task { try await group.run() }
        let listener = Task {
            for await signal in signals {
                carryOut(machine.withLock { $0.signalReceived() }, signal: signal, group: group, groupTask: groupTask)
            }
        }
        let result = await groupTask.result
        listener.cancel()
        let status = machine.withLock { $0.servicesFinished() } ?? .stoppedAtDeadline
        try result.get()
        if status == .stoppedAtDeadline {
            logger.warning("stopped at the shutdown deadline; unfinished work is left for the next owner", metadata: ["exit-status": "\(status)"])
        }
        return status
    }

    private func carryOut(
        _ action: ProcessStop.Action, signal: UnixSignal? = nil, group: ServiceGroup, groupTask: Task<Void, any Error>
    ) {
        switch action {
        case .none:
            if let signal {
                logger.notice("already stopping; \(signal) changes nothing")
            }
        case .shutDownGracefully(let deadline):
            logger.info(
                "stopping: finishing the work in progress", metadata: ["signal": "\(signal.map { "\($0)" } ?? "")", "deadline": "\(deadline)"])
            Task { await group.triggerGracefulShutdown() }
            schedule(after: deadline, group: group, groupTask: groupTask) { $0.deadlinePassed() }
        case .cancel(let allowance):
            logger.warning(
                "shutdown deadline passed: cancelling the work in progress, which is left for the next owner",
                metadata: unfinishedWork())
            groupTask.cancel()
            schedule(after: allowance, group: group, groupTask: groupTask) { $0.allowancePassed() }
        case .exit(let status):
            logger.error(
                "the work in progress did not give way after the shutdown deadline; exiting without it",
                metadata: unfinishedWork().merging(["exit-status": "\(status)"]) { $1 })
            fflush(nil)  // every stdio stream: the log lines above must not be lost to _exit
            _exit(status.code)
        }
    }

    private func schedule(
        after delay: Duration, group: ServiceGroup, groupTask: Task<Void, any Error>,
        _ event: @escaping @Sendable (inout ProcessStop) -> ProcessStop.Action
    ) {
        timers.asyncAfter(deadline: .now() + .nanoseconds(Int(delay.nanoseconds))) { [self] in
            carryOut(machine.withLock { event(&$0) }, group: group, groupTask: groupTask)
        }
    }
}
