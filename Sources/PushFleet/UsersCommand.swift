import APNsCore
import ArgumentParser
import Foundation
import PushCore
import PushStore

/// `pushfleet users …`: a user (openid) and the device they are logged in on.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Look a user up by openid, or log them out of their device.",
        subcommands: [Show.self, LogOut.self])

    /// `pushfleet users show OPENID --app APP`
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The device a user is logged in on.", discussion: "Exit status: 0, or 2 when the openid is logged in nowhere.")

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Argument(help: "The openid.") var openid: String

        func run() async throws {
            let record = try await ClientSession.withRegistry(options, app: app) { session in
                return try await session.registry.user(app: app, openID: openid)
            }
            guard let record else {
                printError("pushfleet: openid \(openid) is logged in on no device of app \(app)")
                throw ExitCode(2)
            }
            if options.json {
                print(String(decoding: record.jsonValue.compactData(), as: UTF8.self))
            } else {
                let suspect = record.suspicion.map { " (suspect: \($0.reason))" } ?? ""
                print("\(openid) is on \(record.token.hex) (\(record.environment.rawValue))\(suspect) tags \(record.tags.joined(separator: ","))")
            }
        }
    }

    /// `pushfleet users logout OPENID --app APP`
    struct LogOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "logout",
            abstract: "Log a user out: the device stays registered with its tags, and no longer belongs to the user.",
            discussion: "Exit status: 0 logged out, 2 the openid was logged in nowhere.")

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Argument(help: "The openid.") var openid: String

        func run() async throws {
            let token = try await ClientSession.withRegistry(options, app: app) { session in
                return try await session.registry.logOut(app: app, openID: openid)
            }
            guard let token else {
                printError("pushfleet: openid \(openid) is logged in on no device of app \(app)")
                throw ExitCode(2)
            }
            let value: JSONValue = ["openid": .string(openid), "token": .string(token.hex), "logged-out": true]
            print(options.json ? String(decoding: value.compactData(), as: UTF8.self) : "▸ logged \(openid) out of \(token.hex)")
        }
    }
}
