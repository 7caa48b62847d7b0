import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import LocalRedis
import PipelineTestSupport
import PushAPI
import PushCore
import PushJobs
import PushPipeline
import PushStore
import Testing

/// An app with a client certificate per environment, against two simulators that read the
/// environment from the certificate: each environment's notifications go with its own
/// certificate, and the worker shows when they expire.
@Suite("Certificates per environment", .serialized)
struct CertificateCredentialTests {
    typealias Stack = PipelineStack

    @Test("both environments send with their own certificate; /readyz, /metrics and the log show the one expiring")
    func certificatePerEnvironment() async throws {
        var options = Stack.Options()
        options.certificates = [.sandbox: .seconds(10 * 86_400 + 3_600), .production: .seconds(365 * 86_400)]
        let sandbox = (0..<60).map(Stack.token)
        let production = (1_000..<1_040).map(Stack.token)
        try await Stack.with(options, productionSimulator: { _ in }) { stack in
            try await stack.register(sandbox)
            try await stack.register(production, environment: .production)
            let port = try LocalRedisServer.freePort()
            let worker = try WorkerProcess.start(stack: stack, environment: ["PUSHFLEET__METRICS__PORT": String(port)])
            defer { worker.forceStop() }
            try await stack.publish(Stack.job(id: "to-sandbox", audience: .broadcast))
            try await stack.publish(Stack.job(id: "to-production", audience: .broadcast, environment: .production))
            for job in ["to-sandbox", "to-production"] {
                let report = try await eventually("\(job) completes") {
                    try await stack.report(job)
                } until: {
                    $0.isComplete
                }
                #expect(report.accepted == (job == "to-sandbox" ? sandbox.count : production.count), "\(job): \(report)")
            }
            #expect(try await stack.simulator.counters().accepted == sandbox.count)
            #expect(try await #require(stack.stack.productionSimulator).counters().accepted == production.count)

            let endpoints = PushAPIClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, apiKey: nil)
            let ready = try await eventually("the worker's /readyz") {
                try? await endpoints.request("GET", "/readyz")
            } until: {
                $0?.status == 200
            }
            let certificates = try #require(ready?.json?.objectValue?["certificates"]?.arrayValue)
            let byEnvironment = Dictionary(
                uniqueKeysWithValues: certificates.compactMap { entry in
                    entry.objectValue.flatMap { object in object["environment"]?.stringValue.map { ($0, object) } }
                })
            #expect(byEnvironment["sandbox"]?["state"] == "expiring")
            #expect(byEnvironment["sandbox"]?["days-left"]?.intValue == 10)
            #expect(byEnvironment["production"]?["state"] == "valid")
            #expect(byEnvironment["production"]?["app"] == "news")

            let metrics = String(decoding: try await endpoints.request("GET", "/metrics").body, as: UTF8.self)
            let days = metrics.split(separator: "\n")
                .first { $0.hasPrefix(#"pushfleet_apns_certificate_expiry_days{app="news",environment="sandbox"} "#) }
                .flatMap { Double($0.split(separator: " ").last ?? "") }
            #expect(days.map { $0 > 10 && $0 < 10.05 } == true, "\(metrics)")
            let log = try String(contentsOf: worker.log, encoding: .utf8)
            #expect(log.contains("the APNs certificate of app news (sandbox) expires in 10 day(s)"), "\(log)")
            #expect(!log.contains("(production) expires"))
            #expect(!log.contains("PRIVATE KEY"))
            try await worker.stopGracefully()
        }
    }

    @Test("a refused credential suspends its own environment only: the other keeps sending")
    func refusalSuspendsOneEnvironment() async throws {
        var options = Stack.Options()
        options.certificates = [.sandbox: .seconds(365 * 86_400), .production: .seconds(365 * 86_400)]
        let sandbox = (0..<200).map(Stack.token)
        let production = (1_000..<1_200).map(Stack.token)
        // The sandbox refuses every request as APNs does a revoked certificate's (the production
        // simulator starts from the sandbox's configuration: its faults are cleared).
        try await Stack.with(
            options, simulator: { $0.faults.rejectsProviderTokens = true }, productionSimulator: { $0.faults = APNsSimulatorFaults() }
        ) { stack in
            try await stack.register(sandbox)
            try await stack.register(production, environment: .production)
            try await stack.withWorker { counters in
                try await stack.publish(Stack.job(id: "refused", audience: .broadcast))
                _ = try await eventually("the sandbox suspended") {
                    try await AppSuspension(client: stack.redis).reason(app: Stack.app, environment: .sandbox)
                } until: {
                    $0 != nil
                }
                try await stack.publish(Stack.job(id: "unaffected", audience: .broadcast, environment: .production))
                let report = try await eventually("the production job completes") {
                    try await stack.report("unaffected")
                } until: {
                    $0.isComplete
                }
                #expect(report.accepted == production.count)
                #expect(try await AppSuspension(client: stack.redis).reason(app: Stack.app, environment: .production) == nil)
                let refused = try await stack.report("refused")
                #expect(refused.accepted == 0)
                #expect(counters[.providerSuspensions] >= 1)
            }
            #expect(try await #require(stack.stack.productionSimulator).counters().accepted == production.count)
        }
    }
}
