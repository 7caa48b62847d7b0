import APNsCore
import FlowControl
import Foundation
import Logging
import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL
import Synchronization

/// Sends notifications to APNs over persistent HTTP/2 connections.
///
/// One connection pool exists per (credential, environment), opened on first use; one provider
/// token per signing key is shared by all of them. ``send(_:)`` answers every notification APNs
/// answered with an ``APNsResponse`` (refusals included, classified) and throws ``APNsError``
/// only when there is no answer.
///
/// ```swift
/// let client = try APNsClient(configuration: .init())
/// let response = try await client.send(request)
/// switch response.responseClass { … }
/// await client.shutdown()
/// ```
public final class APNsClient: Sendable {
    private struct PoolKey: Hashable {
        var credentialID: String
        var environment: APNsEnvironment
        var service: APNsService
    }

    private struct Pools: ~Copyable {
        var pools: [PoolKey: (pool: APNsConnectionPool, tokens: APNsProviderTokenManager?)] = [:]
        var tokenManagers: [String: APNsProviderTokenManager] = [:]
        var isShutdown = false
    }

    private struct ErrorBody: Decodable {
        var reason: String?
        var timestamp: Int64?
    }

    /// The spread of reconnect and retry delays: each is drawn from 50% to 150% of its window,
    /// so the connections of a fleet that lost APNs together do not come back together.
    static let backoffJitter = 0.5

    public let configuration: APNsClientConfiguration
    let eventLoopGroup: any EventLoopGroup
    private let ownsEventLoopGroup: Bool
    private let trustRoots: NIOSSLTrustRoots
    private let providerTokenClock: @Sendable () -> Date
    private let retryBackoff: ExponentialBackoff
    private let logger: Logger
    private let pools = Mutex(Pools())
    /// Draws the `apns-id` of requests that carry none: a system random draw per notification
    /// was a system call, two of them per UUID.
    let apnsIDs = Mutex(SplitMix64())
    /// The binary interface's idle connections and the next frame identifier.
    let binary = Mutex(BinaryState())

    /// - Parameters:
    ///   - eventLoopGroup: the loops connections run on; `nil` creates (and owns) one thread per
    ///     core.
    ///   - providerTokenClock: the clock provider tokens are issued and aged by; tests inject one.
    public init(
        configuration: APNsClientConfiguration,
        eventLoopGroup: (any EventLoopGroup)? = nil,
        providerTokenClock: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "apns")
    ) throws(APNsError) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup ?? MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        self.ownsEventLoopGroup = eventLoopGroup == nil
        self.providerTokenClock = providerTokenClock
        self.retryBackoff = ExponentialBackoff(base: configuration.retryBackoffBase, maximum: APNsAttempts.longestWait, jitter: Self.backoffJitter)
        self.logger = logger
        do {
            switch configuration.trustRoots {
            case .system:
                trustRoots = .default
            case .pem(let pem):
                trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))
            case .pemFile(let path):
                trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
            }
        } catch {
            throw APNsError(.invalidCredential, underlying: error)
        }
    }

    /// Sends one notification, waiting for a free stream if every connection is full.
    ///
    /// Streams the server refused (GOAWAY, stream limit) are sent again on another connection
    /// without counting as attempts; a 403 ExpiredProviderToken is retried once with a new token
    /// (when the old one is at least 20 minutes old); other retryable outcomes are retried up to
    /// ``APNsClientConfiguration/maxAttempts`` with jittered backoff, with the same `apns-id`
    /// (the rule is ``APNsAttempts``).
    public func send(_ request: APNsRequest) async throws(APNsError) -> APNsResponse {
        let apnsID = (request.apnsID ?? apnsIDs.withLock { APNsID.random(using: &$0) }).uuidString
        return try await sendOne(
            credential: request.credential, environment: request.environment, service: .push, payload: request.payload
        ) { authority, providerToken in
            Self.headers(for: request, deviceToken: request.deviceToken, apnsID: apnsID, authority: authority, providerToken: providerToken)
        }
    }

    /// Sends one request of `service` (a notification, a broadcast, a channel management
    /// request) until ``APNsAttempts`` calls its outcome final. `headers` makes its header list
    /// for the endpoint's authority and a provider token.
    func sendOne(
        credential: APNsCredential, environment: APNsEnvironment, service: APNsService, payload: ByteBuffer,
        headers: (String, APNsProviderToken?) -> HPACKHeaders
    ) async throws(APNsError) -> APNsResponse {
        let (pool, tokens) = try pool(for: credential, environment: environment, service: service)
        let providerToken = try await currentToken(from: tokens)
        let authority = configuration.endpoint(for: environment, service: service).host
        return try await follow(
            payload: payload, pool: pool, tokens: tokens, providerToken: providerToken, after: nil,
            headers: { headers(authority, $0) }
        ).get()
    }

    /// Sends `notification` to every device of `tokens` (its own `deviceToken` and `apnsID` are
    /// not used: each device gets a new `apns-id`), and calls `onResult` once per device, with
    /// its index in `tokens`, as soon as its result is final; returns when every device has its
    /// result. `onResult` runs on whatever thread the answer arrives on (often a connection's
    /// event loop): keep it short, and never block in it.
    ///
    /// This is how a campaign is sent, and it costs less per device than as many ``send(_:)``
    /// calls: the streams are leased many at a time, each connection is reached once per lease
    /// with all of its requests, and an answer reaches `onResult` without a task, a promise or a
    /// future of its own. Devices are sent to in their order. One whose first answer calls for
    /// another send (a refused stream, an expired provider token, a retry) continues by itself
    /// as in ``send(_:)``.
    ///
    /// `payloads`, when given, holds each device's own payload (one per token, in place of the
    /// notification's): a badge the server keeps differs from device to device.
    public func send(
        _ notification: APNsRequest, to tokens: [DeviceToken], payloads: [ByteBuffer]? = nil,
        onResult: @escaping @Sendable (Int, Result<APNsResponse, APNsError>) -> Void
    ) async {
        guard !tokens.isEmpty else { return }
        precondition(payloads == nil || payloads!.count == tokens.count, "one payload per token")
        let payload: (Int) -> ByteBuffer = { index in payloads?[index] ?? notification.payload }
        let largestPayload = payloads?.lazy.map(\.readableBytes).max() ?? notification.payload.readableBytes
        let pool: APNsConnectionPool
        let tokenManager: APNsProviderTokenManager?
        let providerToken: APNsProviderToken?
        do {
            (pool, tokenManager) = try self.pool(for: notification.credential, environment: notification.environment, service: .push)
            providerToken = try await currentToken(from: tokenManager)
        } catch {
            for index in tokens.indices { onResult(index, .failure(error)) }
            return
        }
        let apnsIDs = self.apnsIDs.withLock { generator in
            tokens.map { _ in APNsID.random(using: &generator).uuidString }
        }
        let authority = configuration.endpoint(for: notification.environment).host
        let batch = APNsBatch(
            count: tokens.count, maxAttempts: configuration.maxAttempts,
            maxRefusals: configuration.maxRefusedStreamRetries, usesProviderToken: providerToken != nil, onResult: onResult)

        var next = 0
        while next < tokens.count {
            let start = ContinuousClock.now
            let grants: [APNsConnectionPool.Grant]
            do {
                grants = try await pool.lease(
                    upTo: tokens.count - next, bytes: largestPayload, timeout: configuration.requestTimeout)
            } catch {
                for index in next..<tokens.count { batch.noStream(index: index, error) }
                break
            }
            let timeout = TimeAmount.nanoseconds(max((configuration.requestTimeout - (.now - start)).nanoseconds, 0))
            for grant in grants {
                var submissions: [APNsConnection.Submission] = []
                submissions.reserveCapacity(grant.streams)
                for index in next..<(next + grant.streams) {
                    let headers = Self.headers(
                        for: notification, deviceToken: tokens[index], apnsID: apnsIDs[index], authority: authority,
                        providerToken: providerToken)
                    submissions.append(
                        APNsConnection.Submission(
                            headers: headers, payload: payload(index), timeout: timeout, request: .batch(batch, index: index)))
                }
                grant.connection.execute(submissions)
                next += grant.streams
            }
        }

        await withTaskGroup(of: Void.self) { group in
            for await followUp in batch.followUps {
                let deviceToken = tokens[followUp.index]
                let apnsID = apnsIDs[followUp.index]
                let devicePayload = payload(followUp.index)
                group.addTask {
                    let result = await self.follow(
                        payload: devicePayload, pool: pool, tokens: tokenManager, providerToken: providerToken,
                        after: followUp.outcome,
                        headers: {
                            Self.headers(for: notification, deviceToken: deviceToken, apnsID: apnsID, authority: authority, providerToken: $0)
                        })
                    onResult(followUp.index, result)
                }
            }
        }
    }

    /// Sends a request until ``APNsAttempts`` calls its outcome final, starting from `first`
    /// (the outcome of a send made in a batch) when given. `headers` makes the request's header
    /// list for a provider token (the same request after a token renewal carries the new one).
    private func follow(
        payload: ByteBuffer, pool: APNsConnectionPool, tokens: APNsProviderTokenManager?,
        providerToken: APNsProviderToken?, after first: APNsAttempts.Outcome?,
        headers: (APNsProviderToken?) -> HPACKHeaders
    ) async -> Result<APNsResponse, APNsError> {
        var providerToken = providerToken
        var attempts = APNsAttempts(maxAttempts: configuration.maxAttempts, maxRefusals: configuration.maxRefusedStreamRetries)
        var outcome = first
        while true {
            let sent: APNsAttempts.Outcome
            if let outcome {
                sent = outcome
            } else {
                sent = await sendOnce(headers: headers(providerToken), payload: payload, pool: pool)
            }
            outcome = nil
            var next = attempts.next(after: sent, usesProviderToken: tokens != nil && providerToken != nil)
            if case .renewProviderToken(let otherwise) = next {
                do {
                    if let tokens, let current = providerToken, let fresh = try await replaceToken(current, in: tokens) {
                        providerToken = fresh
                        continue
                    }
                } catch {
                    return .failure(error)
                }
                next = otherwise
            }
            switch next {
            case .done(let result):
                return result
            case .sendAgain, .renewProviderToken:
                continue
            case .backOff(let attempt, let atLeast):
                do {
                    try await backoff(attempt: attempt, atLeast: atLeast ?? .zero)
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    /// One send: a stream leased (waiting at most the request timeout), the request on it, its
    /// outcome within what is left of the request timeout.
    private func sendOnce(headers: HPACKHeaders, payload: ByteBuffer, pool: APNsConnectionPool) async -> APNsAttempts.Outcome {
        let deadline = ContinuousClock.now + configuration.requestTimeout
        let connection: APNsConnection
        do {
            connection = try await pool.lease(timeout: configuration.requestTimeout, bytes: payload.readableBytes)
        } catch {
            return .noStream(error)
        }
        let remaining = deadline - ContinuousClock.now
        // The connection gives the stream back to the pool when it ends.
        let outcome = await Self.wait(
            connection.execute(headers: headers, payload: payload, timeout: .nanoseconds(max(remaining.nanoseconds, 0))))
        return .stream(outcome)
    }

    /// The provider token manager shared by every pool of a token credential (created on first
    /// use); `nil` for certificate credentials.
    public func providerTokenManager(for credential: APNsCredential) throws(APNsError) -> APNsProviderTokenManager? {
        guard case .token(let teamID, let keyID, let privateKeyPEM) = credential.material else { return nil }
        return try pools.withLock { state throws(APNsError) in
            if let existing = state.tokenManagers[credential.id] { return existing }
            do {
                let manager = try APNsProviderTokenManager(
                    teamID: teamID, keyID: keyID, privateKeyPEM: privateKeyPEM,
                    policy: configuration.providerTokenPolicy, now: providerTokenClock)
                state.tokenManagers[credential.id] = manager
                return manager
            } catch {
                throw APNsError(.invalidCredential, underlying: error)
            }
        }
    }

    /// One pool's figures, for metrics.
    public struct PoolStatistics: Sendable, Hashable {
        public var environment: APNsEnvironment
        /// Connections that finished their handshake and take new streams.
        public var openConnections: Int
        /// Requests on the wire, waiting for their answer.
        public var streamsInFlight: Int
        /// Callers waiting for a free stream.
        public var waiters: Int
        /// The connections the pools keep (what their sizing decided; the open ones follow).
        public var targetConnections: Int = 0
        /// The longest of the pools' round trips (the quickest answer of the last 30 s), when
        /// measured.
        public var roundTrip: Duration?

        /// `statistics` summed per environment (a fleet's clients, or one client's pools),
        /// sorted by environment.
        public static func summedByEnvironment(_ statistics: some Sequence<PoolStatistics>) -> [PoolStatistics] {
            var byEnvironment: [APNsEnvironment: PoolStatistics] = [:]
            for figures in statistics {
                var total =
                    byEnvironment[figures.environment]
                    ?? PoolStatistics(environment: figures.environment, openConnections: 0, streamsInFlight: 0, waiters: 0)
                total.openConnections += figures.openConnections
                total.streamsInFlight += figures.streamsInFlight
                total.waiters += figures.waiters
                total.targetConnections += figures.targetConnections
                if let roundTrip = figures.roundTrip { total.roundTrip = max(total.roundTrip ?? roundTrip, roundTrip) }
                byEnvironment[figures.environment] = total
            }
            return byEnvironment.values.sorted { $0.environment.rawValue < $1.environment.rawValue }
        }
    }

    /// The figures of every pool opened so far, by environment (a client serves one app's
    /// credential, or several: pools of the same environment are summed).
    public func poolStatistics() -> [PoolStatistics] {
        let pools = self.pools.withLock { state in state.pools.map { ($0.key.environment, $0.value.pool) } }
        return PoolStatistics.summedByEnvironment(
            pools.map { environment, pool in
                let figures = pool.statistics
                var statistics = PoolStatistics(
                    environment: environment, openConnections: figures.openConnections, streamsInFlight: figures.streamsInUse,
                    waiters: figures.waiters)
                statistics.targetConnections = figures.targetConnections
                statistics.roundTrip = figures.roundTrip
                return statistics
            })
    }

    /// Closes every connection; pending and later sends fail with ``APNsError/Code/shutdown``.
    public func shutdown() async {
        let pools = self.pools.withLock { state in
            state.isShutdown = true
            return state.pools.values.map(\.pool)
        }
        let idle = binary.withLock { state in
            defer { state.idle = [:] }
            return state.idle.values.flatMap { $0 }
        }
        for connection in idle {
            connection.close()
        }
        for pool in pools {
            await pool.shutdown()
        }
        if ownsEventLoopGroup {
            try? await eventLoopGroup.shutdownGracefully()
        }
    }

    private func pool(
        for credential: APNsCredential, environment: APNsEnvironment, service: APNsService
    ) throws(APNsError) -> (APNsConnectionPool, APNsProviderTokenManager?) {
        let key = PoolKey(credentialID: credential.id, environment: environment, service: service)
        let existing = try pools.withLock { state throws(APNsError) in
            guard !state.isShutdown else { throw APNsError(.shutdown) }
            return state.pools[key]
        }
        if let existing { return existing }
        let tokens = try providerTokenManager(for: credential)
        let sslContext = try makeSSLContext(for: credential)
        let pool = APNsConnectionPool(
            eventLoopGroup: eventLoopGroup, endpoint: configuration.endpoint(for: environment, service: service), sslContext: sslContext,
            configuration: configuration, logger: logger)
        return pools.withLock { state in
            if let raced = state.pools[key] { return raced }
            state.pools[key] = (pool, tokens)
            return (pool, tokens)
        }
    }

    func makeSSLContext(for credential: APNsCredential, http2: Bool = true) throws(APNsError) -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = http2 ? ["h2"] : []
        tls.certificateVerification = .fullVerification
        tls.trustRoots = trustRoots
        if let identity = try credential.tlsIdentity() {
            tls.certificateChain = identity.chain.map { .certificate($0) }
            tls.privateKey = .privateKey(identity.key)
        }
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw APNsError(.invalidCredential, underlying: error)
        }
    }

    private func currentToken(from tokens: APNsProviderTokenManager?) async throws(APNsError) -> APNsProviderToken? {
        guard let tokens else { return nil }
        do {
            return try await tokens.token()
        } catch {
            throw APNsError(.invalidCredential, underlying: error)
        }
    }

    private func replaceToken(
        _ rejected: APNsProviderToken, in tokens: APNsProviderTokenManager
    ) async throws(APNsError) -> APNsProviderToken? {
        do {
            return try await tokens.token(replacing: rejected)
        } catch {
            throw APNsError(.invalidCredential, underlying: error)
        }
    }

    private func backoff(attempt: Int, atLeast: Duration) async throws(APNsError) {
        do {
            try await Task.sleep(for: max(retryBackoff.randomDelay(attempt: attempt), atLeast))
        } catch {
            throw APNsError(.cancelled)
        }
    }

    private static func wait(_ future: EventLoopFuture<APNsStreamOutcome>) async -> APNsStreamOutcome {
        do {
            return try await future.get()
        } catch {
            return .connectionLost(error)
        }
    }

    /// The header list of `request` sent to `deviceToken`.
    package static func headers(
        for request: APNsRequest, deviceToken: DeviceToken, apnsID: String, authority: String, providerToken: APNsProviderToken?
    ) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(12)
        func pseudoHeader(_ name: String, _ value: @autoclosure () -> String) -> String {
            request.headerOverrides.last { $0.name == name }?.value ?? value()
        }
        headers.add(name: ":method", value: pseudoHeader(":method", "POST"))
        headers.add(name: ":scheme", value: "https")
        headers.add(
            name: ":path", value: pseudoHeader(":path", "/3/device/" + deviceToken.hex), indexing: .nonIndexable)
        headers.add(name: ":authority", value: authority)
        if let providerToken {
            headers.add(name: "authorization", value: providerToken.authorization)
        }
        headers.add(name: "apns-topic", value: request.topic)
        headers.add(name: "apns-push-type", value: request.pushType.rawValue)
        if let priority = request.priority {
            headers.add(name: "apns-priority", value: priority.description)
        }
        if let expiration = request.expiration {
            headers.add(name: "apns-expiration", value: String(expiration), indexing: .nonIndexable)
        }
        if let collapseID = request.collapseID {
            // Indexed: a campaign's notifications share one (their job's), so after the first
            // request of a connection it is a one-byte reference to HPACK's dynamic table.
            headers.add(name: "apns-collapse-id", value: collapseID)
        }
        headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
        for (name, value) in request.headerOverrides where !name.hasPrefix(":") {
            if let value {
                headers.add(name: name, value: value)
            } else {
                headers.remove(name: name)
            }
        }
        return headers
    }

    /// APNs's answer from what came on its stream. `nowMilliseconds` (since 1970) dates a
    /// `Retry-After` given as an HTTP date.
    package static func response(
        status: Int, headers: APNsAnswerHeaders, body: ByteBuffer?, attempts: Int,
        nowMilliseconds: @autoclosure () -> Int64 = APNsClient.nowMilliseconds()
    ) -> APNsResponse {
        let isSuccess = (200..<300).contains(status)
        var reason: APNsReason?
        var timestamp: Int64?
        if !isSuccess, let body, body.readableBytes > 0,
            let decoded = try? JSONDecoder().decode(ErrorBody.self, from: Data(body.readableBytesView))
        {
            reason = decoded.reason.map(APNsReason.init(rawValue:))
            timestamp = decoded.timestamp
        }
        let wait = headers.retryAfter.flatMap { APNsRetryAfter.delay($0, nowMilliseconds: nowMilliseconds()) }
        var response = APNsResponse(
            status: status, apnsID: headers.apnsID, reason: reason, timestamp: timestamp, retryAfter: wait, attempts: attempts)
        if let channel = headers.channel {
            let kept = isSuccess && (body?.readableBytes ?? 0) > 0 ? body : nil
            response.channel = APNsChannelHeaders(requestID: channel.requestID, channelID: channel.channelID, body: kept)
        }
        return response
    }

    /// Milliseconds since 1970 by the system clock.
    package static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
