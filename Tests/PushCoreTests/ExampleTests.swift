import APNsCore
import Foundation
import PushCore
import Testing

/// Every example in schemas/examples/ is valid and survives a round trip.
struct ExampleTests {
    @Test func examplesExist() {
        #expect(Fixtures.validExampleFiles.count >= 10)
    }

    @Test(arguments: Fixtures.validExampleFiles.map(\.lastPathComponent))
    func exampleIsValid(name: String) throws {
        let data = try Data(contentsOf: Fixtures.examples.appendingPathComponent(name))
        #expect(throws: Never.self) { try PushJob.decodeAndValidate(from: data) }
    }

    @Test(arguments: Fixtures.validExampleFiles.map(\.lastPathComponent))
    func exampleRoundTrips(name: String) throws {
        let data = try Data(contentsOf: Fixtures.examples.appendingPathComponent(name))
        let job = try PushJob.decodeAndValidate(from: data)
        let written = job.jsonData()
        #expect(try PushJob.decodeAndValidate(from: written) == job)

        // The payload is written back exactly: same keys in the same order, numbers as written.
        let original = try JSONValue(parsing: data)
        let rewritten = try JSONValue(parsing: written)
        #expect(rewritten.value(at: ["notification"]) == original.value(at: ["notification"]))
        #expect(job.notification.payloadData() == original.value(at: ["notification"])?.compactData())
    }

    @Test(arguments: Fixtures.validExampleFiles.map(\.lastPathComponent))
    func exampleDecodesThroughFoundationCodable(name: String) throws {
        let data = try Data(contentsOf: Fixtures.examples.appendingPathComponent(name))
        let canonical = try PushJob.decodeAndValidate(from: data)
        let viaFoundation = try JSONDecoder().decode(PushJob.self, from: data)
        // Foundation keeps neither key order nor number text (2.0 becomes 2): compare canonically.
        #expect(viaFoundation.jsonValue.canonicalized == canonical.jsonValue.canonicalized)
        let reencoded = try JSONDecoder().decode(PushJob.self, from: JSONEncoder().encode(canonical))
        #expect(reencoded.jsonValue.canonicalized == canonical.jsonValue.canonicalized)
    }

    @Test func customKeysKeepTheirOrderAndNumberText() throws {
        let data = try Data(contentsOf: Fixtures.examples.appendingPathComponent("tokens-custom-keys.json"))
        let job = try PushJob.decodeAndValidate(from: data)
        #expect(job.notification.object.keys == ["zeta-order-id", "aps", "deeplink", "price", "tracking"])
        #expect(job.notification.customKeys.keys == ["zeta-order-id", "deeplink", "price", "tracking"])
        #expect(job.notification.aps?.keys.contains("x-unknown-aps-key") == true)
        let payload = String(decoding: job.notification.payloadData(), as: UTF8.self)
        #expect(payload.hasPrefix(#"{"zeta-order-id":9007199254740993,"aps":{"#))
        #expect(payload.contains(#""legs":[1,2.0,"three",null]"#))
    }

    @Test func uppercaseTokensAreNormalised() throws {
        let data = try Data(contentsOf: Fixtures.examples.appendingPathComponent("tokens-custom-keys.json"))
        let job = try PushJob.decodeAndValidate(from: data)
        guard case .tokens(let tokens) = job.audience else {
            Issue.record("expected a token audience, got \(job.audience)")
            return
        }
        #expect(tokens.count == 3)
        #expect(tokens.allSatisfy { $0.hex == $0.hex.lowercased() })
    }

    @Test func scheduledJobKeepsItsSettings() throws {
        let data = try Data(contentsOf: Fixtures.examples.appendingPathComponent("scheduled-throttled.json"))
        let job = try PushJob.decodeAndValidate(from: data)
        #expect(job.id == "campaign-2026-spring-01")
        #expect(job.idempotencyKey == "shop:campaign:spring-01")
        #expect(job.throttle == ThrottleOverride(ratePerSecond: 2500, sleepAfter: 10_000, sleepMilliseconds: 250))
        // 2026-03-20T09:00:00+01:00 is 08:00 UTC.
        #expect(job.sendAt == Date(timeIntervalSince1970: 1_773_993_600))
        #expect(job.jsonValue.value(at: ["send-at"]) == "2026-03-20T08:00:00Z")
    }
}
