import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushAPI
import PushCore
import PushJobs
import PushPipeline
import PushStore
import Testing

/// Location audiences end to end through the API against the simulator: devices report where
/// they are, a campaign to an area reaches those located in it, once each, and none of the
/// others.
@Suite("Area audiences through the API", .serialized)
struct APILocationTests {
    static let app = EmbeddedStack.app
    static let paris = GeoPoint(latitude: 48.8566, longitude: 2.3522)

    /// A point `kilometres` north of Paris.
    static func north(_ kilometres: Double) -> JSONValue {
        let point = GeoPoint(latitude: paris.latitude + kilometres / (6_371 * Double.pi / 180), longitude: paris.longitude)
        return ["lat": .number(JSONNumber(point.latitude)!), "lon": .number(JSONNumber(point.longitude)!)]
    }

    static func campaign(_ audience: JSONValue) -> JSONValue {
        ["environment": "sandbox", "audience": audience, "notification": ["aps": ["alert": "Storm warning"]], "headers": ["push-type": "alert"]]
    }

    static let circle: JSONValue = ["lat": 48.8566, "lon": 2.3522, "radius-km": 10]

    @Test("a campaign to an area reaches the devices located in it, once each: not those outside, moved out, forgotten or never located")
    func campaignReachesTheArea() async throws {
        let tokens = (0..<200).map(PipelineStack.token)
        try await PipelineStack.with(simulator: { $0.recordsRequests = true }) { stack in
            // Even devices carry `rain`.
            try await stack.register(tokens.enumerated().filter { $0.offset.isMultiple(of: 2) }.map(\.element), tags: ["rain"])
            try await stack.register(tokens.enumerated().filter { !$0.offset.isMultiple(of: 2) }.map(\.element))
            try await stack.withAPI { api, _ in
                let path = { (token: DeviceToken) in "/v1/apps/\(Self.app)/devices/\(token.hex)/location" }
                // 0..<100 within 5 km of Paris, 100..<150 50 km away, 150..<200 never report.
                for (index, token) in tokens.prefix(150).enumerated() {
                    let answer = try await api.request("PUT", path(token), json: Self.north(index < 100 ? Double(index) / 20 : 50))
                    #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
                }
                let stored = try await api.request("GET", path(tokens[3]))
                let storedLatitude = try #require(stored.json?.objectValue?["lat"]?.numberValue?.doubleValue)
                #expect(stored.status == 200 && abs(storedLatitude - (Self.paris.latitude + 0.15 / 111.195)) < 0.01)
                #expect(stored.json?.objectValue?["expires-at"]?.intValue ?? 0 > Int(Date().timeIntervalSince1970 * 1000) + 6 * 86_400_000)
                // Device 0 moves away; device 1 forgets its location.
                #expect(try await api.request("PUT", path(tokens[0]), json: Self.north(80)).status == 200)
                let forgotten = try await api.request("DELETE", path(tokens[1]))
                #expect(forgotten.status == 200 && forgotten.json?.objectValue?["forgotten"] == true)
                #expect(try await api.request("GET", path(tokens[1])).status == 404)
                #expect(try await api.request("GET", path(tokens[170])).status == 404, "never reported")

                let inside = Set(tokens[2..<100].map(\.hex))
                let estimate = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/audience/estimate", json: ["environment": "sandbox", "audience": ["area": Self.circle]])
                #expect(estimate.status == 200 && estimate.json?.objectValue?["devices"]?.intValue == inside.count)
                #expect(estimate.json?.objectValue?["exact"] == false)

                func run(_ audience: JSONValue) async throws -> [String: Int] {
                    try await stack.simulator.reset()
                    let (_, report) = try await stack.publishAndFinish(Self.campaign(audience), through: api)
                    var sent: [String: Int] = [:]
                    let markers = Set((0..<10).map { PipelineStack.markerToken($0).hex })
                    for record in try await stack.simulator.requestRecords() where record.status == 200 {
                        if let token = record.deviceToken, !markers.contains(token) { sent[token, default: 0] += 1 }
                    }
                    #expect(report.accepted == sent.values.reduce(0, +), "\(report.lines)")
                    return sent
                }

                let everyone = try await run(["area": Self.circle])
                #expect(
                    Set(everyone.keys) == inside,
                    "missing \(inside.subtracting(everyone.keys).count), extra \(Set(everyone.keys).subtracting(inside))")
                #expect(everyone.values.allSatisfy { $0 == 1 }, "each device once")

                let rain = try await run(["area": Self.circle, "tags": ["all": ["rain"]]])
                let evenInside = Set(tokens.enumerated().filter { (2..<100).contains($0.offset) && $0.offset.isMultiple(of: 2) }.map(\.element.hex))
                #expect(Set(rain.keys) == evenInside)

                // Unbinding a device forgets its location.
                #expect(try await api.request("DELETE", "/v1/apps/\(Self.app)/devices/\(tokens[2].hex)").status == 200)
                #expect(try await stack.registry.location(app: Self.app, token: tokens[2]) == nil)
            }
        }
    }

    @Test("bad location input: a clear 4xx naming the field, nothing stored")
    func badInput() async throws {
        let token = PipelineStack.token(1)
        try await PipelineStack.with { stack in
            try await stack.register([token])
            try await stack.withAPI { api, _ in
                let path = "/v1/apps/\(Self.app)/devices/\(token.hex)/location"
                let cases: [(JSONValue, String)] = [
                    (["lat": 95, "lon": 2], "lat"), (["lat": 48, "lon": 200], "lon"), (["lat": "48", "lon": 2], "lat"), (["lat": 48], "lon"),
                    (["lat": 48, "lon": 2, "accuracy": 5], "accuracy"),
                ]
                for (body, field) in cases {
                    let answer = try await api.request("PUT", path, json: body)
                    #expect(answer.status == 400 && answer.errorField == field, "\(body): \(String(decoding: answer.body, as: UTF8.self))")
                }
                #expect(try await api.request("GET", path).status == 404, "nothing stored")
                let unknown = try await api.request(
                    "PUT", "/v1/apps/\(Self.app)/devices/\(PipelineStack.token(2).hex)/location", json: ["lat": 48, "lon": 2])
                #expect(unknown.status == 404 && unknown.errorField == "token")

                let area = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push", json: Self.campaign(["area": ["lat": 48, "lon": 2, "radius-km": 0]]))
                #expect(area.status == 400 && area.errorField == "audience.area.radius-km")
                let ambiguous = try await api.request(
                    "POST", "/v1/apps/\(Self.app)/push", json: Self.campaign(["area": Self.circle, "broadcast": true]))
                #expect(ambiguous.status == 400 && ambiguous.errorField == "audience")
            }
        }
    }
}
