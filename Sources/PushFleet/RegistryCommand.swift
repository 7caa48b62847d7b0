import ArgumentParser
import Foundation
import PushCore
import PushStore
import Synchronization

/// `pushfleet registry …`: how an app's devices are laid out in Redis, and growing it.
struct RegistryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "registry",
        abstract: "Show an app's registry layout (shards, epoch) or raise its shard count on a live registry.",
        subcommands: [Layout.self, Reshard.self])

    /// `pushfleet registry layout --app APP`
    struct Layout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the app's shard count, layout epoch and device counts.")

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String

        func run() async throws {
            try await ClientSession.withRegistry(options, app: app) { session in
                let layout = try await session.registry.refreshLayout(app: app)
                let count = try await session.registry.deviceCount(app: app)
                if options.json {
                    let value: JSONValue = [
                        "app": .string(app), "shards": .number(JSONNumber(layout.shards)), "epoch": .number(JSONNumber(layout.epoch)),
                        "reshardingFrom": layout.migratingFrom.map { .number(JSONNumber($0)) } ?? .null,
                        "devices": .number(JSONNumber(count.total)),
                    ]
                    print(String(decoding: value.compactData(), as: UTF8.self))
                } else {
                    print("▸ app \(app): \(layout); \(ProgressBar.grouped(count.total)) devices")
                }
            }
        }
    }

    /// `pushfleet registry reshard --app APP --shards N`
    struct Reshard: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Raise the app's shard count (how many shard tasks a broadcast fans out to) on a live registry.",
            discussion: """
                The new count must be a multiple of the current one, at most 2,048. Devices move to their new shards \
                bucket by bucket while workers send: a campaign running meanwhile reaches every device once, and \
                writes to a bucket wait while it moves (a few milliseconds). Broadcasts published from then on fan \
                out to the new count once the reshard finished. If it is interrupted, run it again with the same \
                count: it carries on where it stopped. \
                Exit status: 0 done, 1 refused or failed (nothing lost; run it again), 64 usage.
                """)

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "The new shard count.") var shards: Int
        @Option(help: "Old shards moved at once.") var concurrency = 4

        func validate() throws {
            guard shards >= 1 else { throw ValidationError("--shards must be at least 1") }
            guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
        }

        func run() async throws {
            let start = ContinuousClock.now
            let report = try await ClientSession.withRegistry(options, app: app) { session in
                let bar = SharedProgress(ProgressBar(label: "resharding", toStandardError: true))
                let json = options.json
                let report = try await session.registry.reshard(app: app, to: shards, concurrency: concurrency) { done, total, moved in
                    if !json {
                        bar.value.withLock { $0.update(done: done, total: total, detail: "shards · \(ProgressBar.grouped(moved)) devices moved") }
                    }
                }
                if !json { bar.value.withLock { $0.finish() } }
                return report
            }
            let elapsed = ContinuousClock.now - start
            let seconds = elapsed / .seconds(1)
            if options.json {
                let value: JSONValue = [
                    "app": .string(app), "from": .number(JSONNumber(report.before.migratingFrom ?? report.before.shards)),
                    "shards": .number(JSONNumber(report.after.shards)), "epoch": .number(JSONNumber(report.after.epoch)),
                    "bucketsMoved": .number(JSONNumber(report.bucketsMoved)), "devicesMoved": .number(JSONNumber(report.devicesMoved)),
                ]
                print(String(decoding: value.compactData(), as: UTF8.self))
            } else if report.bucketsMoved == 0 && report.before == report.after {
                print("▸ app \(app) has \(report.after.shards) shards already; nothing to do")
            } else {
                print(
                    "▸ app \(app): \(report.before.migratingFrom ?? report.before.shards) → \(report.after.shards) shards, "
                        + "\(ProgressBar.grouped(report.devicesMoved)) devices moved in \(String(format: "%.1f", seconds)) s")
            }
        }
    }
}

/// A progress bar the reshard's progress callback (called from its tasks) draws.
private final class SharedProgress: Sendable {
    let value: Mutex<ProgressBar>

    init(_ bar: ProgressBar) {
        value = Mutex(bar)
    }
}
