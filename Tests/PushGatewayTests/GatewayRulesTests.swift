import PushGateway
import Testing

@Suite("Gateway rules")
struct GatewayRulesTests {
    @Test("the frame budget: a burst at once, then the rate, refilled with time and capped at the burst")
    func rateLimit() {
        var limit = MessageRateLimit(perSecond: 10, burst: 3, now: 0)
        func admitted(at times: [UInt64]) -> [Bool] {
            times.map { limit.admit(now: $0) }
        }
        #expect(admitted(at: [0, 0, 0, 0]) == [true, true, true, false])
        // 10 per second: one frame per 100 ms.
        #expect(admitted(at: [99_000_000, 100_000_000, 100_000_000]) == [false, true, false])
        // An hour idle refills the burst, not more.
        let later: UInt64 = 3_600_000_000_000
        #expect(admitted(at: [later, later, later, later]) == [true, true, true, false])
        // Time going backwards (it cannot, monotonic; but a caller's mistake) refills nothing.
        #expect(admitted(at: [5]) == [false])
    }

    @Test("pings spread over 20 slices of the interval by connection number; leases outlast the idle timeout")
    func heartbeat() {
        let schedule = HeartbeatSchedule(pingInterval: .seconds(20), idleTimeout: .seconds(60))
        #expect(schedule.firstPing(connection: 0) == .seconds(20))
        #expect(schedule.firstPing(connection: 1) == .seconds(21))
        #expect(schedule.firstPing(connection: 19) == .seconds(39))
        #expect(schedule.firstPing(connection: 20) == .seconds(20))
        let firsts = Set((0..<1_000).map { schedule.firstPing(connection: UInt64($0)) })
        #expect(firsts.count == HeartbeatSchedule.slices)
        #expect(schedule.presenceLease == .seconds(80))
        #expect(!schedule.isIdle(lastHeard: 0, now: 59_999_999_999))
        #expect(schedule.isIdle(lastHeard: 0, now: 60_000_000_000))
        #expect(!schedule.isIdle(lastHeard: 10, now: 5))
    }

    @Test("connect paths and where their token comes from")
    func requests() {
        #expect(GatewayRequest(target: "/v1/apps/news/connect", authorization: nil) == GatewayRequest(app: "news", token: nil))
        #expect(
            GatewayRequest(target: "/v1/apps/news/connect?x=1&token=v1.a.b", authorization: nil)
                == GatewayRequest(app: "news", token: "v1.a.b"))
        #expect(
            GatewayRequest(target: "/v1/apps/news/connect?token=q", authorization: "Bearer  h ")
                == GatewayRequest(app: "news", token: "h"))
        #expect(GatewayRequest(target: "/v1/apps/news/connect", authorization: "Basic abc") == GatewayRequest(app: "news", token: nil))
        for target in ["/", "/v1/apps//connect", "/v1/apps/news", "/v1/apps/news/connect/x", "/v2/apps/news/connect", "v1/apps/news/connect"] {
            #expect(GatewayRequest(target: target, authorization: nil) == nil, "\(target)")
        }
    }

    @Test("a client's text frame: its type, or the close that refuses it")
    func messages() {
        #expect(GatewayMessages.parse(Array(#"{"type":"ack","id":"j1:7"}"#.utf8)) == .success(.ack(id: "j1:7")))
        #expect(GatewayMessages.parse(Array(#"{"type":"ack","id":7}"#.utf8)) == .success(.ackWithoutID))
        #expect(GatewayMessages.parse(Array(#"{"type":"ack"}"#.utf8)) == .success(.ackWithoutID))
        #expect(GatewayMessages.parse(Array(#"{"type":"hello"}"#.utf8)) == .success(.unknown(type: "hello")))
        #expect(GatewayMessages.parse(Array("nope".utf8)) == .failure(.badMessage("not JSON")))
        #expect(GatewayMessages.parse(Array("[1]".utf8)) == .failure(.badMessage("not a JSON object")))
        #expect(GatewayMessages.parse(Array(#"{"type":1}"#.utf8)) == .failure(.badMessage("no string 'type'")))
        let welcome = String(
            decoding: GatewayMessages.welcome(
                gateway: "g1", connection: 7, schedule: HeartbeatSchedule(pingInterval: .seconds(25), idleTimeout: .seconds(60))),
            as: UTF8.self)
        #expect(welcome == #"{"type":"welcome","gateway":"g1","connection":"7","ping-interval-seconds":25,"idle-timeout-seconds":60}"#)
    }
}
