import APNsCore
import PushGateway
import Testing

@Suite("Connect token")
struct ConnectTokenTests {
    let signer = ConnectToken(secret: Array(repeating: 7, count: 32))
    let device = try! DeviceToken(hex: String(repeating: "ab", count: 32))

    @Test("a token opens its app's connections until its expiry, inclusive")
    func verifies() throws {
        let claims = ConnectToken.Claims(app: "news", device: device, expiresAt: 1_000)
        let text = signer.issue(claims)
        #expect(text.hasPrefix("v1."))
        #expect(try signer.verify(text, app: "news", now: 999) == claims)
        #expect(try signer.verify(text, app: "news", now: 1_000) == claims)
        #expect(throws: ConnectToken.Refusal.expired) { try signer.verify(text, app: "news", now: 1_001) }
    }

    @Test("another app's token, another key's, an altered one and garbage are refused with their reason")
    func refuses() {
        let text = signer.issue(ConnectToken.Claims(app: "news", device: device, expiresAt: 1_000))
        #expect(throws: ConnectToken.Refusal.otherApp) { try signer.verify(text, app: "sports", now: 0) }
        let other = ConnectToken(secret: Array(repeating: 8, count: 32))
        #expect(throws: ConnectToken.Refusal.forged) { try other.verify(text, app: "news", now: 0) }
        // The claims of another token under this token's MAC.
        let parts = text.split(separator: ".")
        let longer = signer.issue(ConnectToken.Claims(app: "news", device: device, expiresAt: 9_999)).split(separator: ".")
        #expect(throws: ConnectToken.Refusal.forged) { try signer.verify("v1.\(longer[1]).\(parts[2])", app: "news", now: 0) }
        for garbage in ["", "v1", "v1..", "v2.\(parts[1]).\(parts[2])", "v1.\(parts[1])", "v1.!!.\(parts[2])", "v1.\(parts[1]).AAAA", text + ".x"] {
            #expect(throws: ConnectToken.Refusal.malformed, "\(garbage)") { try signer.verify(garbage, app: "news", now: 0) }
        }
    }

    @Test("each refusal closes with its own code; the credentials' refusals are 4001–4003")
    func closeCodes() {
        #expect(GatewayClose.refusal(.malformed).code == 4001)
        #expect(GatewayClose.refusal(.forged).code == 4001)
        #expect(GatewayClose.refusal(.expired).code == 4002)
        #expect(GatewayClose.refusal(.otherApp).code == 4003)
        let all: [GatewayClose] = [
            .goingAway, .binaryFrame, .fragmented, .protocolError, .badMessage("x"), .frameTooLarge(limit: 10), .unauthorized,
            .tokenExpired, .otherApp, .unknownApp, .idle, .replaced, .rateLimited, .dropped,
        ]
        #expect(Set(all.map(\.label)).count == all.count)
        #expect(all.allSatisfy { $0.label != "other" && $0.reason.utf8.count <= 123 })
    }
}
