import APNsCore
import ArgumentParser
import Foundation
import PushCore
import PushStore

/// `pushfleet activities …`: the update tokens of running Live Activities, kept until they
/// expire; a job with the audience `{"activity": "<id>"}` goes to them.
struct ActivitiesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activities",
        abstract: "Keep, forget and count the update tokens of a Live Activity.",
        subcommands: [Bind.self, Unbind.self, Show.self])

    struct Target: ParsableArguments {
        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "sandbox or production.") var environment: String
        @Option(help: "The Live Activity's id (ActivityKit's Activity.id).") var activity: String

        func parsed() throws -> (APNsEnvironment, LiveActivityID) {
            let environment = try parseEnvironment(environment)
            guard let activity = LiveActivityID(activity) else {
                throw ValidationError("--activity must be 1 to \(LiveActivityID.maxLength) characters of A-Z a-z 0-9 . _ -")
            }
            return (environment, activity)
        }
    }

    /// `pushfleet activities bind TOKEN --app A --environment E --activity ID [--expires-in S]`
    struct Bind: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Keep an update token of the activity until it expires.",
            discussion: "Exit status: 0 kept, 1 the activity holds 100,000 tokens already.")

        @OptionGroup var target: Target
        @Option(help: "Seconds to keep it, 1 to 86400 (default 43200: 8 hours running and 4 on the lock screen).")
        var expiresIn: Int = Int(ActivityTokenStore.defaultLifetimeMilliseconds / 1000)
        @Argument(help: "The update token (hex).") var token: String

        func run() async throws {
            let (environment, activity) = try target.parsed()
            let deviceToken = try parseToken(token)
            guard (1...Int(ActivityTokenStore.maxLifetimeMilliseconds / 1000)).contains(expiresIn) else {
                throw ValidationError("--expires-in must be 1 to \(ActivityTokenStore.maxLifetimeMilliseconds / 1000) seconds")
            }
            let now = StoreClock.system()
            let expiresAt = now + Int64(expiresIn) * 1000
            let kept = try await ClientSession.withRegistry(target.options, app: target.app) { session in
                try await ActivityTokenStore(client: session.redis).register(
                    app: target.app, environment: environment, activity: activity, token: deviceToken, expiresAt: expiresAt, now: now)
            }
            guard kept else {
                printError("pushfleet: activity \(activity) holds \(ActivityTokenStore.maxTokensPerActivity) update tokens already")
                throw ExitCode(1)
            }
            let value: JSONValue = [
                "activity": .string(activity.rawValue), "environment": .string(environment.rawValue), "token": .string(deviceToken.hex),
                "expires-at": .number(JSONNumber(Int(expiresAt))),
            ]
            print(
                target.options.json
                    ? String(decoding: value.compactData(), as: UTF8.self) : "▸ kept \(deviceToken.hex) for activity \(activity) for \(expiresIn) s")
        }
    }

    /// `pushfleet activities unbind TOKEN --app A --environment E --activity ID`
    struct Unbind: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget an update token of the activity.", discussion: "Exit status: 0 forgotten, 2 not kept.")

        @OptionGroup var target: Target
        @Argument(help: "The update token (hex).") var token: String

        func run() async throws {
            let (environment, activity) = try target.parsed()
            let deviceToken = try parseToken(token)
            let removed = try await ClientSession.withRegistry(target.options, app: target.app) { session in
                try await ActivityTokenStore(client: session.redis).unregister(
                    app: target.app, environment: environment, activity: activity, token: deviceToken)
            }
            print(removed ? "▸ forgot \(deviceToken.hex)" : "token \(deviceToken.hex) is not an update token of activity \(activity)")
            if !removed { throw ExitCode(2) }
        }
    }

    /// `pushfleet activities show --app A --environment E --activity ID`
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The activity's update tokens that have not expired.")

        @OptionGroup var target: Target

        func run() async throws {
            let (environment, activity) = try target.parsed()
            let tokens = try await ClientSession.withRegistry(target.options, app: target.app) { session in
                try await ActivityTokenStore(client: session.redis).tokens(
                    app: target.app, environment: environment, activity: activity, now: StoreClock.system())
            }
            for token in tokens {
                print(token.hex)
            }
        }
    }
}
