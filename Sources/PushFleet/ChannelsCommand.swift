import APNs
import APNsCore
import ArgumentParser
import Foundation
import NIOPosix
import PushConfiguration
import PushCore
import PushPipeline
import PushStore

/// `pushfleet channels …`: an app's Live Activity broadcast channels (iOS 18), managed through
/// Apple's channel management API with the app's credential, and kept in Redis so that jobs can
/// name them (audience `{"channel": "<id>"}`).
struct ChannelsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Create, list and delete an app's Live Activity broadcast channels.",
        subcommands: [Create.self, List.self, Delete.self])

    struct Target: ParsableArguments {
        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "sandbox or production.") var environment: String

        /// Opens Redis and an APNs client, runs `body` with the channel manager, the app and the
        /// environment, and closes them whatever happens.
        func with<Value>(_ body: (ChannelManager, AppSettings, APNsEnvironment) async throws -> Value) async throws -> Value {
            let chosen = try parseEnvironment(environment)
            return try await ClientSession.withRegistry(options, app: app) { session in
                let settings = try session.app(app)
                try requireEnvironment(chosen, of: settings)
                let client = try APNsClient(
                    configuration: session.configuration.apns.clientConfiguration(connectionsPerPool: 1),
                    eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: session.logger)
                let manager = ChannelManager(client: client, store: ChannelStore(client: session.redis))
                let result: Result<Value, any Error>
                do {
                    result = .success(try await body(manager, settings, chosen))
                } catch let error as ChannelManagerError {
                    result = .failure(ChannelsCommand.failure(error))
                } catch {
                    result = .failure(error)
                }
                await manager.shutdown()
                return try result.get()
            }
        }
    }

    /// Prints a channel operation's failure; exit 2 for an unknown channel, 1 otherwise.
    static func failure(_ error: ChannelManagerError) -> ExitCode {
        printError("pushfleet: \(error.message)" + (error.field.map { " (\($0))" } ?? ""))
        return ExitCode(error.kind == .unknownChannel ? 2 : 1)
    }

    static func printChannel(_ record: ChannelRecord, environment: APNsEnvironment, json: Bool, verb: String) {
        if json {
            print(String(decoding: record.jsonValue(environment: environment).compactData(), as: UTF8.self))
        } else {
            print("\(verb)\(record.id) (\(environment.rawValue), storage \(record.messageStoragePolicy.name))")
        }
    }

    /// `pushfleet channels create --app A --environment E [--storage-policy P]`
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a channel at APNs and keep it for jobs.",
            discussion: "Exit status: 0 created (the channel id is printed), 1 refused by APNs, unreachable, or the app holds 10,000 channels.")

        @OptionGroup var target: Target
        @Option(help: "What APNs keeps for devices offline: none (broadcasts expire at once) or most-recent.")
        var storagePolicy: String = "none"

        func run() async throws {
            guard let policy = APNsMessageStoragePolicy(name: storagePolicy) else {
                throw ValidationError("--storage-policy must be none or most-recent")
            }
            let json = target.options.json
            try await target.with { manager, app, environment in
                let record = try await manager.create(app: app, environment: environment, policy: policy)
                ChannelsCommand.printChannel(record, environment: environment, json: json, verb: "▸ created ")
            }
        }
    }

    /// `pushfleet channels list --app A --environment E [--at-apns]`
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the app's channels.",
            discussion: "With --at-apns, the ids APNs holds for the app, each marked as kept by PushFleet or not.")

        @OptionGroup var target: Target
        @Flag(help: "Ask APNs for every channel id it holds for the app.") var atApns = false

        func run() async throws {
            let json = target.options.json
            try await target.with { manager, app, environment in
                let records = try await manager.channels(app: app, environment: environment)
                if atApns {
                    let kept = Set(records.map(\.id))
                    let ids = try await manager.channelIDsAtAPNs(app: app, environment: environment)
                    for id in ids {
                        if json {
                            let value: JSONValue = [
                                "channel": .string(id.rawValue), "environment": .string(environment.rawValue), "kept": .bool(kept.contains(id)),
                            ]
                            print(String(decoding: value.compactData(), as: UTF8.self))
                        } else {
                            print("\(id)\(kept.contains(id) ? "" : "  (not kept by PushFleet)")")
                        }
                    }
                    return
                }
                for record in records {
                    ChannelsCommand.printChannel(record, environment: environment, json: json, verb: "")
                }
            }
        }
    }

    /// `pushfleet channels delete CHANNEL --app A --environment E`
    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a channel at APNs and from PushFleet.",
            discussion: "Exit status: 0 deleted, 1 refused by APNs or unreachable, 2 neither APNs nor PushFleet has the channel.")

        @OptionGroup var target: Target
        @Argument(help: "The channel id.") var channel: String

        func run() async throws {
            guard let id = APNsChannelID(channel) else {
                throw ValidationError("'\(channel)' is not a channel id (base64, 1 to \(APNsChannelID.maxLength) characters)")
            }
            let json = target.options.json
            try await target.with { manager, app, environment in
                try await manager.delete(app: app, environment: environment, id: id)
                let value: JSONValue = ["channel": .string(id.rawValue), "environment": .string(environment.rawValue), "removed": true]
                print(json ? String(decoding: value.compactData(), as: UTF8.self) : "▸ deleted \(id)")
            }
        }
    }
}
