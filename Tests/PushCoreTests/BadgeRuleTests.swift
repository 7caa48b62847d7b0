import APNsCore
import PushCore
import Testing

/// `aps.badge` as a rule the server carries out for each device (``BadgeRule``), and where a job
/// may hold one.
struct BadgeRuleTests {
    /// The fixture job with `badge` as its `aps.badge` and `audience`.
    static func job(badge: JSONValue, audience: JSONValue = ["broadcast": true]) -> JSONValue {
        Fixtures.job.setting(badge, at: ["notification", "aps", "badge"]).setting(audience, at: ["audience"])
    }

    @Test func aNumberIsNoRuleAnObjectIsOne() throws {
        #expect(try Fixtures.decode(Self.job(badge: 3)).notification.badgeRule == nil)
        #expect(try Fixtures.decode(Self.job(badge: ["increment": 2])).notification.badgeRule == .increment(2))
        #expect(try Fixtures.decode(Self.job(badge: ["set": 0])).notification.badgeRule == .set(0))
        #expect(try Fixtures.decode(Fixtures.job).notification.badgeRule == nil)
    }

    static let rejected: [(badge: JSONValue, field: String)] = [
        (["increment": 0], "notification.aps.badge.increment"),
        (["increment": 65_536], "notification.aps.badge.increment"),
        (["set": -1], "notification.aps.badge.set"),
        (["set": 1.5], "notification.aps.badge.set"),
        (["increment": "1"], "notification.aps.badge.increment"),
        (["increment": 1, "set": 2], "notification.aps.badge"),
        ([:], "notification.aps.badge"),
        (["decrement": 1], "notification.aps.badge.decrement"),
        (-1, "notification.aps.badge"),
        ("1", "notification.aps.badge"),
    ]

    @Test(arguments: rejected)
    func malformedBadgesAreRejectedNamingTheField(badge: JSONValue, field: String) {
        let error = Fixtures.rejection(Self.job(badge: badge))
        #expect(error?.field == field, "\(badge): \(String(describing: error))")
    }

    @Test func aKeptBadgeNeedsRegisteredDevicesOfTheDeviceRegistry() {
        for audience: JSONValue in [["openids": ["u1"]], ["tags": ["all": ["news"]]], ["broadcast": true]] {
            #expect(Fixtures.rejection(Self.job(badge: ["increment": 1], audience: audience)) == nil, "\(audience)")
        }
        let listed = Fixtures.rejection(Self.job(badge: ["increment": 1], audience: ["tokens": [.string(Fixtures.token)]]))
        #expect(listed?.field == "notification.aps.badge")
        #expect(listed?.message.contains("openids, tags, broadcast or an area") == true)
        // A number goes to a token list as before.
        #expect(Fixtures.rejection(Self.job(badge: 4, audience: ["tokens": [.string(Fixtures.token)]])) == nil)
        let voip = Self.job(badge: ["increment": 1]).setting("voip", at: ["headers", "push-type"])
        #expect(Fixtures.rejection(voip)?.field == "notification.aps.badge")
    }

    @Test func aChunkOfSuchAJobCarriesItsDevicesAsTokens() throws {
        var job = try Fixtures.decode(Self.job(badge: ["increment": 1]))
        job.id = "j"
        let token = try DeviceToken(hex: Fixtures.token)
        let chunk = DeliveryChunk(job: job, chunkID: "s0-0", tokens: [token], positions: [2_147_484_672])
        let decoded = try DeliveryChunk.decodeAndValidate(from: chunk.jsonData())
        #expect(decoded.job.notification.badgeRule == .increment(1))
        #expect(decoded.positions == [2_147_484_672])
    }
}
