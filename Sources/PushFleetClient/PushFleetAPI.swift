import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The PushFleet API calls a device makes with its device key: a connect token for its
/// online-channel connection, and receipts. Over `URLSession` (HTTPS; works on Linux too).
public struct PushFleetAPI: Sendable {
    /// The API's base URL (`https://api.example.com`).
    public var baseURL: URL
    public var app: String
    /// The device's token, hex.
    public var device: String
    /// A device key of the app (`api-keys: ["sha256:… device"]`).
    public var deviceKey: String
    private let session: URLSession

    public init(baseURL: URL, app: String, device: String, deviceKey: String, session: URLSession = .shared) {
        self.baseURL = baseURL
        self.app = app
        self.device = device
        self.deviceKey = deviceKey
        self.session = session
    }

    /// The API answered otherwise than expected.
    public struct Failure: Error, CustomStringConvertible {
        public var status: Int
        public var body: String
        public var description: String { "the PushFleet API answered \(status): \(body.prefix(300))" }
    }

    /// A new connect token for the device (`POST …/devices/{token}/connect-token`).
    public func connectToken() async throws -> String {
        let answer = try await call("devices/\(device)/connect-token", body: [:], expecting: 201)
        guard let token = answer["connect-token"] as? String else { throw Failure(status: 201, body: "no connect-token in the answer") }
        return token
    }

    /// A receipt of `job` for the device (`POST …/receipts`): `delivered` or `opened`.
    public func receipt(job: String, event: String) async throws {
        _ = try await call("receipts", body: ["job": job, "token": device, "event": event], expecting: nil)
    }

    private func call(_ path: String, body: [String: String], expecting status: Int?) async throws -> [String: Any] {
        var request = URLRequest(url: baseURL.appendingPathComponent("v1/apps/\(app)/\(path)"))
        request.httpMethod = "POST"
        request.setValue("Bearer \(deviceKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await session.data(for: request)
        let code = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status.map({ $0 == code }) ?? (200..<300).contains(code) else {
            throw Failure(status: code, body: String(decoding: data, as: UTF8.self))
        }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }
}
