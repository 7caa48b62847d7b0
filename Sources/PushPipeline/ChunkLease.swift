import FlowControl
import Foundation
import Logging
import PushStore
import ServiceLifecycle

/// A send stage's hold on one chunk (``JobStore/leaseChunk(jobID:chunkID:holder:for:)``): taken
/// before the chunk's sent markers are read, extended while its notifications go out, released
/// once every outcome is settled. A second copy of the chunk, in this worker or another, waits
/// for it and then skips what the first one settled, instead of sending the same tokens again.
struct ChunkLease: Sendable {
    /// How long a lease lasts unless extended: how long the chunk of a sender that died waits
    /// before another sender takes it over. The holder extends it every third of that.
    static let duration: Duration = .seconds(10)
    /// The longest pause between two attempts of a waiting sender.
    static let longestPoll: Duration = .milliseconds(250)

    let outlet: PipelineOutlet
    let jobs: JobStore
    let jobID: String
    let chunkID: String
    /// This attempt's name: every handling of a chunk is its own holder.
    let holder = UUID().uuidString

    /// Runs `body` while holding the chunk's lease, after waiting for it while another sender
    /// holds it. A graceful shutdown ends the wait with `CancellationError`.
    func hold<Value>(_ body: () async throws -> Value) async throws -> Value {
        try await acquire()
        do {
            let value = try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await keepExtended() }
                defer { group.cancelAll() }
                return try await body()
            }
            await release()
            return value
        } catch {
            await release()
            throw error
        }
    }

    private func acquire() async throws {
        let backoff = ExponentialBackoff(base: .milliseconds(10), maximum: Self.longestPoll)
        var waits = 0
        while true {
            if try await Retrying.run("taking the lease of chunk \(chunkID) of job \(jobID)", logger: outlet.logger, operation: take) {
                return
            }
            waits += 1
            if waits == 1 {
                outlet.counters.add(.chunkLeaseWaits)
                outlet.logger.info(
                    "chunk is being sent by another sender: waiting for it to finish",
                    metadata: ["job": "\(jobID)", "chunk": "\(chunkID)"])
            }
            try await cancelWhenGracefulShutdown { [waits] in
                try await Task.sleep(for: backoff.delay(attempt: waits))
            }
        }
    }

    /// Extends the lease every third of its duration until cancelled.
    private func keepExtended() async {
        while true {
            do {
                try await Task.sleep(for: Self.duration / 3)
            } catch {
                return
            }
            do {
                if try await !take() {
                    outlet.logger.warning(
                        "lost the lease of a chunk while sending it (Redis was away longer than the lease?): another sender may send its unsettled tokens too",
                        metadata: ["job": "\(jobID)", "chunk": "\(chunkID)"])
                    return
                }
            } catch is CancellationError {
                return  // the chunk is settled (or the worker stops): the lease is released or expires
            } catch {
                outlet.logger.warning(
                    "could not extend the lease of a chunk; trying again", metadata: ["job": "\(jobID)", "chunk": "\(chunkID)", "error": "\(error)"])
            }
        }
    }

    /// Takes the lease, or extends it when this holder has it: ``duration`` from now.
    private func take() async throws -> Bool {
        try await jobs.leaseChunk(jobID: jobID, chunkID: chunkID, holder: holder, for: Self.duration)
    }

    /// Best effort: a lease that cannot be released expires after ``duration``.
    private func release() async {
        do {
            try await jobs.releaseChunk(jobID: jobID, chunkID: chunkID, holder: holder)
        } catch {
            outlet.logger.info(
                "could not release the lease of a chunk; it expires on its own",
                metadata: ["job": "\(jobID)", "chunk": "\(chunkID)", "error": "\(error)"])
        }
    }
}
