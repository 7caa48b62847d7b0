import APNsCore
import Foundation
import NIOHTTP1
import PushStore
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Binds and unbinds devices through `pushfleet api` processes while a scenario runs, keeping a
/// ledger of what the API acknowledged, and afterwards checks that the registry holds every
/// acknowledged write: a bind answered 200 must find its device registered, an unbind answered
/// 200 must find it gone. A write that fails or gets no answer may or may not have happened and
/// is not checked (the client would retry it); its device is left alone from then on.
final class RegistryWriteLoad: Sendable {
    struct Result: Codable, Equatable {
        /// Requests sent.
        var attempted = 0
        /// Answered 200: binds and unbinds the API acknowledged.
        var acknowledged = 0
        /// Answered with an error (503: Redis could not confirm the write).
        var refused = 0
        /// No answer within the client's timeout.
        var unanswered = 0
        /// Acknowledged writes the registry does not hold afterwards.
        var lost = 0
        /// A few of them, for the report.
        var lostExamples: [String] = []
    }

    private struct Ledger {
        var present: Set<DeviceToken> = []
        var absent: Set<DeviceToken> = []
        var result = Result()

        mutating func lose(_ token: DeviceToken, _ what: String) {
            result.lost += 1
            if result.lostExamples.count < 5 { result.lostExamples.append("\(what) …\(token.hex.suffix(8))") }
        }
    }

    let apis: [URL]
    let app: String
    let apiKey: String
    /// Concurrent writers per API process.
    let writersPerAPI: Int
    /// Pause between a writer's requests.
    let pause: Duration
    private let ledger = Mutex(Ledger())
    private let next = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)

    init(apis: [URL], app: String, apiKey: String, writersPerAPI: Int = 2, pause: Duration = .milliseconds(20)) {
        self.apis = apis
        self.app = app
        self.apiKey = apiKey
        self.writersPerAPI = writersPerAPI
        self.pause = pause
    }

    /// The token of write-load device `n` (apart from the campaign's devices).
    static func token(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "eb", count: 24) + String(format: "%016x", n))
    }

    /// Writes until ``stop()``; returns once every writer's last request is answered or timed
    /// out (``requestTimeout``).
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            for api in apis {
                for _ in 0..<writersPerAPI {
                    group.addTask { await self.write(to: api) }
                }
            }
        }
    }

    /// One writer: binds new devices, and unbinds every third one it saw bound.
    private func write(to api: URL) async {
        var bound: [DeviceToken] = []
        var operation = 0
        while !stopped.load(ordering: .relaxed) {
            operation += 1
            if operation % 3 == 0, !bound.isEmpty {
                let token = bound.removeFirst()
                let status = await send(.DELETE, api: api, token: token)
                ledger.withLock {
                    $0.present.remove(token)
                    if status == 200 { $0.absent.insert(token) }
                    // Not registered: the acknowledged bind is gone already.
                    if status == 404 { $0.lose(token, "bind of") }
                }
            } else {
                let token = Self.token(next.add(1, ordering: .relaxed).newValue)
                if await send(.PUT, api: api, token: token) == 200 {
                    ledger.withLock { _ = $0.present.insert(token) }
                    bound.append(token)
                }
            }
            try? await Task.sleep(for: pause)
        }
    }

    /// Ends the writers after their requests in progress.
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    /// Sends one bind or unbind; the answer's status, `nil` without one.
    /// How long a write waits for its answer: one cut off by a partition counts as unanswered.
    static let requestTimeout: Duration = .seconds(3)

    private func send(_ method: HTTPMethod, api: URL, token: DeviceToken) async -> Int? {
        let url = api.appendingPathComponent("v1/apps/\(app)/devices/\(token.hex)")
        var headers = [("Authorization", "Bearer \(apiKey)")]
        var body: [UInt8]?
        if method == .PUT {
            headers.append(("Content-Type", "application/json"))
            body = Array(#"{"environment":"sandbox"}"#.utf8)
        }
        ledger.withLock { $0.result.attempted += 1 }
        do {
            let status = try await BenchmarkHTTP.request(method, url, headers: headers, body: body, timeout: Self.requestTimeout).status
            ledger.withLock {
                if status == 200 { $0.result.acknowledged += 1 } else { $0.result.refused += 1 }
            }
            return status
        } catch {
            ledger.withLock { $0.result.unanswered += 1 }
            return nil
        }
    }

    /// Reads every acknowledged write back from the registry.
    func verify(_ registry: DeviceRegistry) async throws -> Result {
        var checked = ledger.withLock { $0 }
        for token in checked.present where try await registry.device(app: app, token: token) == nil {
            checked.lose(token, "bind of")
        }
        for token in checked.absent where try await registry.device(app: app, token: token) != nil {
            checked.lose(token, "unbind of")
        }
        return checked.result
    }
}
