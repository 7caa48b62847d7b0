import APNsCore
import Foundation
import PushCore
import Testing

/// Each rule rejects with the field and code it names, and the valid neighbour of each case is
/// accepted (so that the rejection is caused by the rule and nothing else).
struct ValidationRuleTests {
    static let token = JSONValue.string(Fixtures.token)

    static let rejections: [RejectionCase] = [
        // Payload
        .init("missing aps", set: "notification.aps", to: nil, field: "notification.aps", code: .missingField),
        .init("aps not an object", set: "notification.aps", to: "hi", field: "notification.aps", code: .invalidType),
        .init("notification not an object", set: "notification", to: [], field: "notification", code: .invalidType),
        .init("missing notification", set: "notification", to: nil, field: "notification", code: .missingField),
        .init(
            "badge fractional", set: "notification.aps.badge", to: 1.5,
            field: "notification.aps.badge", code: .invalidType),
        .init(
            "badge negative", set: "notification.aps.badge", to: -1,
            field: "notification.aps.badge", code: .invalidValue),
        .init(
            "mutable-content 0", set: "notification.aps.mutable-content", to: 0,
            field: "notification.aps.mutable-content", code: .invalidValue),
        .init(
            "content-available true", set: "notification.aps.content-available", to: true,
            field: "notification.aps.content-available", code: .invalidType),
        .init(
            "relevance-score above 1", set: "notification.aps.relevance-score", to: 1.01,
            field: "notification.aps.relevance-score", code: .invalidValue),
        .init(
            "unknown interruption level", set: "notification.aps.interruption-level", to: "loud",
            field: "notification.aps.interruption-level", code: .invalidValue),
        .init(
            "unknown live activity event", set: "notification.aps.event", to: "pause",
            field: "notification.aps.event", code: .invalidValue),
        .init(
            "content-state not an object", set: "notification.aps.content-state", to: "x",
            field: "notification.aps.content-state", code: .invalidType),
        .init(
            "thread-id not a string", set: "notification.aps.thread-id", to: 7,
            field: "notification.aps.thread-id", code: .invalidType),
        .init(
            "timestamp negative", set: "notification.aps.timestamp", to: -5,
            field: "notification.aps.timestamp", code: .invalidValue),

        // Audience
        .init("empty audience", set: "audience", to: [:], field: "audience", code: .emptyAudience),
        .init("audience not an object", set: "audience", to: "all", field: "audience", code: .invalidType),
        .init("two selectors", set: "audience.broadcast", to: true, field: "audience", code: .ambiguousAudience),
        .init("unknown selector", set: "audience.segments", to: ["a"], field: "audience.segments", code: .unknownField),
        .init("empty token list", set: "audience.tokens", to: [], field: "audience.tokens", code: .emptyAudience),
        .init("tokens not a list", set: "audience.tokens", to: token, field: "audience.tokens", code: .invalidType),
        .init(
            "token not hex", set: "audience.tokens", to: [token, token, token, "12 34"],
            field: "audience.tokens[3]", code: .invalidToken),
        .init(
            "token odd length", set: "audience.tokens", to: ["abc"],
            field: "audience.tokens[0]", code: .invalidToken),
        .init("token empty", set: "audience.tokens", to: [token, ""], field: "audience.tokens[1]", code: .invalidToken),
        .init(
            "token over 200 digits", set: "audience.tokens", to: [.string(String(repeating: "ab", count: 101))],
            field: "audience.tokens[0]", code: .invalidToken),
        .init("token not a string", set: "audience.tokens", to: [42], field: "audience.tokens[0]", code: .invalidType),
        .init(
            "channel id not base64", set: "audience", to: ["channel": "not base64!"],
            field: "audience.channel", code: .invalidValue),
        .init(
            "channel with an alert push type", set: "audience", to: ["channel": "dHN0LXNyY2gtY2hubA=="],
            field: "headers.push-type", code: .invalidValue),
        .init(
            "empty openid list", set: "audience", to: ["openids": []],
            field: "audience.openids", code: .emptyAudience),
        .init(
            "empty openid", set: "audience", to: ["openids": ["u1", ""]],
            field: "audience.openids[1]", code: .invalidValue),
        .init(
            "tags with only none", set: "audience", to: ["tags": ["none": ["muted"]]],
            field: "audience.tags", code: .emptyTagExpression),
        .init(
            "tags with empty all and any", set: "audience", to: ["tags": ["all": [], "any": []]],
            field: "audience.tags", code: .emptyTagExpression),
        .init(
            "empty tag", set: "audience", to: ["tags": ["all": ["a"], "none": [""]]],
            field: "audience.tags.none[0]", code: .invalidValue),
        .init(
            "unknown tag operator", set: "audience", to: ["tags": ["all": ["a"], "not": ["b"]]],
            field: "audience.tags.not", code: .unknownField),
        .init(
            "broadcast false", set: "audience", to: ["broadcast": false],
            field: "audience.broadcast", code: .invalidValue),
        .init(
            "broadcast not a boolean", set: "audience", to: ["broadcast": "yes"],
            field: "audience.broadcast", code: .invalidType),

        // Headers
        .init("missing headers", set: "headers", to: nil, field: "headers", code: .missingField),
        .init("missing push type", set: "headers.push-type", to: nil, field: "headers.push-type", code: .missingField),
        .init(
            "unknown push type", set: "headers.push-type", to: "silent",
            field: "headers.push-type", code: .unknownPushType),
        .init(
            "push type not a string", set: "headers.push-type", to: 1,
            field: "headers.push-type", code: .invalidType),
        .init("priority not APNs's", set: "headers.priority", to: 7, field: "headers.priority", code: .invalidValue),
        .init(
            "expiration negative", set: "headers.expiration", to: -1,
            field: "headers.expiration", code: .invalidValue),
        .init(
            "expiration not a number", set: "headers.expiration", to: "soon",
            field: "headers.expiration", code: .invalidType),
        .init(
            "empty collapse id", set: "headers.collapse-id", to: "",
            field: "headers.collapse-id", code: .invalidValue),
        .init("empty topic", set: "headers.topic", to: "", field: "headers.topic", code: .invalidValue),
        .init("unknown header", set: "headers.apns-id", to: "x", field: "headers.apns-id", code: .unknownField),

        // Top level
        .init("missing app", set: "app", to: nil, field: "app", code: .missingField),
        .init("empty app", set: "app", to: "", field: "app", code: .invalidValue),
        .init(
            "app over 128 characters", set: "app", to: .string(String(repeating: "a", count: 129)),
            field: "app", code: .invalidValue),
        .init("missing environment", set: "environment", to: nil, field: "environment", code: .missingField),
        .init(
            "unknown environment", set: "environment", to: "development",
            field: "environment", code: .unknownEnvironment),
        .init("environment not a string", set: "environment", to: 1, field: "environment", code: .invalidType),
        .init("missing audience", set: "audience", to: nil, field: "audience", code: .missingField),
        .init("empty id", set: "id", to: "", field: "id", code: .invalidValue),
        .init("id not a string", set: "id", to: 12, field: "id", code: .invalidType),
        .init(
            "idempotency key over 128 characters", set: "idempotency-key",
            to: .string(String(repeating: "é", count: 129)),
            field: "idempotency-key", code: .invalidValue),
        .init("unknown top-level key", set: "priority", to: 10, field: "priority", code: .unknownField),
        .init("empty name", set: "name", to: "", field: "name", code: .invalidValue),
        .init("name over 128 characters", set: "name", to: .string(String(repeating: "é", count: 129)), field: "name", code: .invalidValue),
        .init("name with a control character", set: "name", to: "Spring\u{85}sale", field: "name", code: .invalidValue),
        .init("name not a string", set: "name", to: 7, field: "name", code: .invalidType),
        .init(
            "send-at without offset", set: "send-at", to: "2026-03-20T09:00:00",
            field: "send-at", code: .invalidValue),
        .init(
            "send-at on 30 February", set: "send-at", to: "2026-02-30T09:00:00Z",
            field: "send-at", code: .invalidValue),
        .init("send-at hour 24", set: "send-at", to: "2026-03-20T24:00:00Z", field: "send-at", code: .invalidValue),
        .init("send-at leap second", set: "send-at", to: "2016-12-31T23:59:60Z", field: "send-at", code: .invalidValue),
        .init("send-at date only", set: "send-at", to: "2026-03-20", field: "send-at", code: .invalidValue),
        .init("send-at not a string", set: "send-at", to: 1_773_993_600, field: "send-at", code: .invalidType),

        // Throttle
        .init(
            "rate zero", set: "throttle.rate-per-second", to: 0,
            field: "throttle.rate-per-second", code: .invalidValue),
        .init(
            "rate negative", set: "throttle.rate-per-second", to: -10,
            field: "throttle.rate-per-second", code: .invalidValue),
        .init(
            "sleep-after zero", set: "throttle.sleep-after", to: 0,
            field: "throttle.sleep-after", code: .invalidValue),
        .init(
            "sleep-after fractional", set: "throttle.sleep-after", to: 1.5,
            field: "throttle.sleep-after", code: .invalidType),
        .init("sleep-ms negative", set: "throttle.sleep-ms", to: -1, field: "throttle.sleep-ms", code: .invalidValue),
        .init("unknown throttle key", set: "throttle.burst", to: 5, field: "throttle.burst", code: .unknownField),
    ]

    @Test func baseJobIsValid() throws {
        let job = try Fixtures.decode(Fixtures.job)
        #expect(job.app == "com.example.news")
        #expect(job.audience == .tokens([try DeviceToken(hex: Fixtures.token)]))
        #expect(job.id == nil)
    }

    @Test(arguments: rejections)
    func rejection(_ rejection: RejectionCase) {
        let error = Fixtures.rejection(rejection.job)
        #expect(error?.field == rejection.field)
        #expect(error?.code == rejection.code)
    }

    static let acceptedNeighbours: [(keys: [String], value: JSONValue)] = [
        (["notification", "aps", "badge"], 0),
        (["notification", "aps", "badge"], 3.0),
        (["notification", "aps", "relevance-score"], 1),
        (["notification", "aps", "content-available"], 1),
        (["notification", "aps", "x-future-key"], ["anything": [1, "two"]]),
        (["notification", "aps", "event"], "update"),
        (["audience"], ["tags": ["all": [], "any": ["a"]]]),
        (["audience"], ["tags": ["all": ["a"]]]),
        (["audience"], ["broadcast": true]),
        (["audience"], ["openids": ["u1"]]),
        (["audience", "tokens"], ["00", .string(String(repeating: "AB", count: 100))]),
        (["headers", "priority"], 1),
        (["headers", "expiration"], 0),
        (["app"], .string(String(repeating: "é", count: 128))),
        (["id"], "0"),
        (["send-at"], "2024-02-29T23:59:59.123456z"),
        (["send-at"], "2026-03-20t09:00:00-14:00"),
        (["throttle"], [:]),
        (["throttle"], ["rate-per-second": 0.5, "sleep-after": 1, "sleep-ms": 0]),
    ]

    @Test(arguments: acceptedNeighbours)
    func acceptedNeighbour(keys: [String], value: JSONValue) {
        let error = Fixtures.rejection(Fixtures.job.setting(value, at: keys))
        #expect(error == nil)
    }

    @Test(arguments: [(1, true), (5, true), (10, false)])
    func backgroundPriority(priority: Int, accepted: Bool) {
        let job = Fixtures.job
            .setting(["aps": ["content-available": 1]], at: ["notification"])
            .setting(["push-type": "background", "priority": .number(JSONNumber(priority))], at: ["headers"])
        let error = Fixtures.rejection(job)
        #expect((error == nil) == accepted)
        if !accepted {
            #expect(error?.field == "headers.priority")
            #expect(error?.code == .priorityNotAllowed)
        }
    }

    @Test func priorityDefaultsByPushType() throws {
        let background = try Fixtures.decode(
            Fixtures.job
                .setting(["aps": ["content-available": 1]], at: ["notification"])
                .setting("background", at: ["headers", "push-type"]))
        #expect(background.headers.priority == nil)
        #expect(background.headers.effectivePriority == .considerDevicePower)
        let alert = try Fixtures.decode(Fixtures.job)
        #expect(alert.headers.effectivePriority == .immediately)
    }

    @Test(arguments: [10_000, 10_001])
    func tokenCountLimit(count: Int) throws {
        let tokens = JSONValue.array(Array(repeating: Self.token, count: count))
        let error = Fixtures.rejection(Fixtures.job.setting(tokens, at: ["audience", "tokens"]))
        if count <= Audience.maxTokens {
            #expect(error == nil)
        } else {
            #expect(error?.field == "audience.tokens")
            #expect(error?.code == .tooManyTokens)
        }
    }

    @Test func everyPushTypeIsAccepted() throws {
        for pushType in APNsPushType.allCases {
            var job = Fixtures.job.setting(.string(pushType.rawValue), at: ["headers", "push-type"])
            if pushType.forbidsImmediatePriority {
                job = job.setting(["aps": ["content-available": 1]], at: ["notification"])
            }
            #expect(try Fixtures.decode(job).headers.pushType == pushType)
        }
    }

    @Test func handBuiltJobsAreValidatedToo() {
        var job = PushJob(
            app: "com.example.news", environment: .production, audience: .tokens([]),
            notification: APNsPayload(["aps": ["alert": "Hi"]]), headers: PushHeaders(pushType: .alert))
        let expected = MessageValidationError(field: "audience.tokens", code: .emptyAudience, message: "must not be empty")
        #expect(throws: expected) {
            try job.validate()
        }
        job.audience = .broadcast
        job.headers.collapseID = String(repeating: "x", count: 65)
        #expect(throws: MessageValidationError.self) { try job.validate() }
        job.headers.collapseID = nil
        #expect(throws: Never.self) { try job.validate() }
    }

    @Test func sendAtHonoursTheOffset() throws {
        let utc = try Fixtures.decode(Fixtures.job.setting("2026-03-20T08:00:00Z", at: ["send-at"]))
        let offset = try Fixtures.decode(Fixtures.job.setting("2026-03-20T09:30:00+01:30", at: ["send-at"]))
        #expect(utc.sendAt == Date(timeIntervalSince1970: 1_773_993_600))
        #expect(offset.sendAt == utc.sendAt)
        let fraction = try Fixtures.decode(Fixtures.job.setting("1999-12-31T23:59:59.250-00:00", at: ["send-at"]))
        #expect(fraction.sendAt == Date(timeIntervalSince1970: 946_684_799.25))
        #expect(fraction.jsonValue.value(at: ["send-at"]) == "1999-12-31T23:59:59.250Z")
    }
}
