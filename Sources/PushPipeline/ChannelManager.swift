import APNs
import APNsCore
import Foundation
import PushConfiguration
import PushStore

/// Why a channel operation did not happen (``ChannelManager``).
package struct ChannelManagerError: Error, CustomStringConvertible, Sendable {
    package enum Kind: Sendable, Equatable {
        /// The channel is not one of the app's in the environment.
        case unknownChannel
        /// The app holds Apple's limit of channels in the environment.
        case limitReached
        /// APNs refused the request (its status and reason).
        case refused(status: Int, reason: String)
        /// APNs could not be reached, or did not answer.
        case unreachable
        /// The app's credential for the environment could not be loaded (``field`` names its
        /// setting).
        case credential
    }

    package let kind: Kind
    package let message: String
    /// The setting or request field at fault, when there is one.
    package let field: String?

    package var description: String { message }
}

/// Creates, lists and deletes an app's Live Activity broadcast channels: Apple's channel
/// management API does it, ``ChannelStore`` keeps what was created (a job names a channel from
/// there). The API and the CLI share it.
///
/// - create: refused with ``ChannelManagerError/Kind/limitReached`` before Apple is asked when
///   the app holds 10,000 channels in the environment; a channel Apple created that the store
///   then cannot take (another create won the last place) is deleted at Apple again.
/// - delete: at Apple first; the stored channel goes once Apple deleted it or says it has no
///   such channel. A refusal leaves both as they were.
///
/// Credentials are read on first use per app (``OnDemandAPNs``), so a process that never
/// manages channels never reads key files.
package final class ChannelManager: Sendable {
    private let apns: OnDemandAPNs
    private let store: ChannelStore
    private let clock: @Sendable () -> Int64

    package init(apns: OnDemandAPNs, store: ChannelStore, clock: @escaping @Sendable () -> Int64 = StoreClock.system) {
        self.apns = apns
        self.store = store
        self.clock = clock
    }

    package convenience init(client: APNsClient, store: ChannelStore, clock: @escaping @Sendable () -> Int64 = StoreClock.system) {
        self.init(apns: OnDemandAPNs(client: client), store: store, clock: clock)
    }

    /// Creates a channel at Apple and stores it.
    package func create(app: AppSettings, environment: APNsEnvironment, policy: APNsMessageStoragePolicy) async throws -> ChannelRecord {
        guard try await store.count(app: app.id, environment: environment) < APNsChannel.maxPerApp else {
            throw Self.limitReached(app: app.id, environment: environment)
        }
        let credential = try credential(of: app, environment: environment)
        let answer = try await manage(.create(policy), app: app, credential: credential, environment: environment)
        guard let channel = answer.channel else {
            if answer.response.reason == .cannotCreateChannelConfig {
                throw Self.limitReached(app: app.id, environment: environment)
            }
            throw Self.refused(answer.response, doing: "create a channel")
        }
        let record = ChannelRecord(id: channel.id, messageStoragePolicy: policy, createdAt: clock())
        guard try await store.add(app: app.id, environment: environment, record) else {
            _ = try? await manage(.delete(channel.id), app: app, credential: credential, environment: environment)
            throw Self.limitReached(app: app.id, environment: environment)
        }
        return record
    }

    /// The app's channels in the environment, oldest first.
    package func channels(app: AppSettings, environment: APNsEnvironment) async throws -> [ChannelRecord] {
        try await store.channels(app: app.id, environment: environment)
    }

    /// One channel of the app.
    package func channel(app: AppSettings, environment: APNsEnvironment, id: APNsChannelID) async throws -> ChannelRecord {
        guard let record = try await store.channel(app: app.id, environment: environment, id: id) else {
            throw Self.unknown(id, app: app.id, environment: environment)
        }
        return record
    }

    /// The channel ids Apple holds for the app in the environment (created by PushFleet or not).
    package func channelIDsAtAPNs(app: AppSettings, environment: APNsEnvironment) async throws -> [APNsChannelID] {
        let credential = try credential(of: app, environment: environment)
        let answer = try await manage(.list, app: app, credential: credential, environment: environment)
        guard answer.isSuccess else { throw Self.refused(answer.response, doing: "list the channels") }
        return answer.channelIDs
    }

    /// Deletes a channel at Apple and from the store.
    package func delete(app: AppSettings, environment: APNsEnvironment, id: APNsChannelID) async throws {
        let stored = try await store.channel(app: app.id, environment: environment, id: id)
        let credential = try credential(of: app, environment: environment)
        let answer = try await manage(.delete(id), app: app, credential: credential, environment: environment)
        guard answer.isSuccess || answer.response.reason == .channelNotRegistered else {
            throw Self.refused(answer.response, doing: "delete channel \(id)")
        }
        try await store.remove(app: app.id, environment: environment, id: id)
        if stored == nil, !answer.isSuccess {
            throw Self.unknown(id, app: app.id, environment: environment)
        }
    }

    package func shutdown() async {
        await apns.shutdown()
    }

    private func manage(
        _ operation: APNsChannelOperation, app: AppSettings, credential: APNsCredential, environment: APNsEnvironment
    ) async throws(ChannelManagerError) -> APNsChannelAnswer {
        do {
            return try await apns.client.manageChannels(operation, bundleID: app.bundleID, credential: credential, environment: environment)
        } catch {
            throw ChannelManagerError(
                kind: .unreachable, message: "APNs's channel management API did not answer: \(error)", field: nil)
        }
    }

    private func credential(of app: AppSettings, environment: APNsEnvironment) throws(ChannelManagerError) -> APNsCredential {
        do {
            return try apns.credential(of: app, environment: environment)
        } catch {
            throw ChannelManagerError(
                kind: .credential, message: "the credential of app \(app.id) cannot be read: \(error.message)", field: error.key)
        }
    }

    private static func limitReached(app: String, environment: APNsEnvironment) -> ChannelManagerError {
        ChannelManagerError(
            kind: .limitReached,
            message: "app \(app) holds \(APNsChannel.maxPerApp) channels in \(environment.rawValue), Apple's limit; delete one first",
            field: nil)
    }

    private static func unknown(_ id: APNsChannelID, app: String, environment: APNsEnvironment) -> ChannelManagerError {
        ChannelManagerError(
            kind: .unknownChannel, message: "channel \(id) is not a channel of app \(app) in \(environment.rawValue)", field: "channel")
    }

    private static func refused(_ response: APNsResponse, doing what: String) -> ChannelManagerError {
        let reason = response.reason?.rawValue ?? "status \(response.status)"
        return ChannelManagerError(
            kind: .refused(status: response.status, reason: reason),
            message: "APNs refused to \(what): \(response.status) \(reason)" + (response.requestID.map { " (apns-request-id \($0))" } ?? ""),
            field: nil)
    }
}
