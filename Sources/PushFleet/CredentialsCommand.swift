import APNs
import APNsCore
import ArgumentParser
import FlowControl
import Foundation
import Logging
import NIOPosix
import PushConfiguration
import PushCore
import PushPipeline
import PushStore

/// `pushfleet credentials check --app A`: opens a connection to APNs (or the configured
/// endpoint) with the app's credential and reports what it learned.
struct CredentialsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credentials",
        abstract: "Check an app's APNs credentials.",
        subcommands: [Check.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Connect to APNs with an app's credential and send it a probe no device receives.",
            discussion: """
                For each environment of the app (or --environment): the credential (key id, or the certificate and \
                when it expires), the endpoint, and APNs's answer to a background notification for a device token of \
                zeros. APNs checks the credential, topic and environment before the token, so 400 BadDeviceToken means \
                they were accepted. Exit status: 0 every environment accepted; 1 one was refused, unreachable, or \
                its certificate has expired; 64 usage.
                """)

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "Only this environment (sandbox or production).") var environment: String?

        func run() async throws {
            let configuration = try options.loadConfiguration()
            guard let settings = configuration.apps[app] else {
                throw ValidationError("unknown app '\(app)'; the configuration has \(configuration.apps.keys.sorted().joined(separator: ", "))")
            }
            var environments = settings.environments
            if let environment {
                environments = [try requireEnvironment(try parseEnvironment(environment), of: settings)]
            }
            let pushApp: PushApp
            let expiries: [CertificateExpiry]
            do {
                pushApp = try PushApp.load(settings)
                expiries = try pushApp.certificateExpiries()
            } catch {
                throw ValidationError("configuration \(options.config): \(error)")
            }
            var logger = Logger(label: "pushfleet.credentials")
            logger.logLevel = .error
            let apnsSettings = configuration.apns
            let clientConfiguration = apnsSettings.clientConfiguration(connectionsPerPool: 1)
            let client = try APNsClient(configuration: clientConfiguration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
            var passed = true
            var results: [JSONValue] = []
            for environment in environments {
                let endpoint = clientConfiguration.endpoint(for: environment)
                let credential = pushApp.credential(for: environment)
                let expiry = expiries.first { $0.environment == environment }
                let started = ContinuousClock.now
                let outcome: Result<APNsResponse, APNsError>
                do {
                    outcome = .success(try await client.send(CredentialCheck.probe(for: pushApp, environment: environment)))
                } catch {
                    outcome = .failure(error)
                }
                let elapsed = ContinuousClock.now - started
                let verdict = CredentialCheck.verdict(outcome)
                let now = StoreClock.system()
                let expired = expiry.map { $0.state(now: now) == .expired } ?? false
                passed = passed && verdict.passed && !expired
                let milliseconds = Int(elapsed.wholeMilliseconds)
                if options.json {
                    results.append([
                        "environment": .string(environment.rawValue), "endpoint": .string("\(endpoint.host):\(endpoint.port)"),
                        "credential": .string(credential.id), "certificate": expiry.map { $0.jsonValue(now: now) } ?? .null,
                        "verdict": .string(Self.name(verdict)), "answer": .string(Self.detail(verdict)),
                        "milliseconds": .number(JSONNumber(milliseconds)),
                    ])
                } else {
                    print("\(app) \(environment.rawValue): \(credential.id) at \(endpoint.host):\(endpoint.port)")
                    if let expiry {
                        let state = expiry.state(now: now)
                        print(
                            "  certificate valid until \(expiry.notValidAfterText) "
                                + "(\(Int(expiry.daysLeft(now: now).rounded(.down))) days left\(state == .valid ? "" : ", \(state.rawValue)"))")
                    }
                    print("  \(Self.name(verdict)): \(Self.detail(verdict)) (\(milliseconds) ms)")
                }
            }
            await client.shutdown()
            if options.json {
                print(
                    String(
                        decoding: JSONValue.object(["app": .string(app), "passed": .bool(passed), "environments": .array(results)]).compactData(),
                        as: UTF8.self))
            }
            if !passed { throw ExitCode(1) }
        }

        static func name(_ verdict: CredentialCheck.Verdict) -> String {
            switch verdict {
            case .accepted: "accepted"
            case .credentialRefused: "credential refused"
            case .configurationRefused: "topic or environment refused"
            case .inconclusive: "inconclusive"
            case .unreachable: "unreachable"
            }
        }

        static func detail(_ verdict: CredentialCheck.Verdict) -> String {
            switch verdict {
            case .accepted(let answer): "APNs answered \(answer) to the probe"
            case .credentialRefused(let reason), .configurationRefused(let reason), .inconclusive(let reason): "APNs answered \(reason)"
            case .unreachable(let reason): reason
            }
        }
    }
}
