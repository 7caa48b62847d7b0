import ArgumentParser
import Foundation
import PushConfiguration
import PushPipeline
import PushStore
import Redis

/// `pushfleet stats JOB`: a job's statistics from Redis.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print a job's statistics: targeted, sent, accepted, failed by reason, removed, retried, dead-lettered.")

    @OptionGroup var options: ProcessOptions

    @Argument(help: "The job id.")
    var job: String

    @Flag(help: "Print the raw counters as JSON.")
    var json = false

    func run() async throws {
        let configuration = try options.loadConfiguration()
        let redis = RedisClient(configuration: try configuration.redis.redisConfiguration())
        let counters: [String: Int]
        do {
            counters = try await JobStore(client: redis).statistics(jobID: job)
            await redis.shutdown()
        } catch {
            await redis.shutdown()
            throw error
        }
        if counters.isEmpty {
            FileHandle.standardError.write(Data("no statistics for job '\(job)' (unknown, or expired)\n".utf8))
            throw ExitCode(2)
        }
        if json {
            let data = try JSONSerialization.data(withJSONObject: counters, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            JobReport(jobID: job, counters: counters).lines.forEach { print($0) }
        }
    }
}
