import Foundation
public import PushCore

/// The online channel's frames: JSON text objects with a string `type`. Pure.
///
/// From the gateway: `welcome` once the connection is authenticated (its gateway, connection
/// number and heartbeat settings), `error` for a message it does not know (the connection
/// stays). From the app: nothing is required but pongs (WebSocket control frames); message types
/// come with the delivery routing (acks).
public enum GatewayMessages {
    /// The `type` of a client's text frame, or why it is not a PushFleet message.
    public static func type(of text: [UInt8]) -> Result<String, GatewayClose> {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: Data(text))
        } catch {
            return .failure(.badMessage("not JSON"))
        }
        guard let object = value.objectValue else { return .failure(.badMessage("not a JSON object")) }
        guard let type = object["type"]?.stringValue else { return .failure(.badMessage("no string 'type'")) }
        return .success(type)
    }

    /// `{"type":"welcome",…}`.
    public static func welcome(gateway: String, connection: UInt64, schedule: HeartbeatSchedule) -> [UInt8] {
        let value: JSONValue = [
            "type": "welcome", "gateway": .string(gateway), "connection": .string(String(connection)),
            "ping-interval-seconds": .number(JSONNumber(Int(schedule.pingInterval.components.seconds))),
            "idle-timeout-seconds": .number(JSONNumber(Int(schedule.idleTimeout.components.seconds))),
        ]
        return Array(value.compactData())
    }

    /// `{"type":"error","reason":…}`.
    public static func error(_ reason: String) -> [UInt8] {
        let value: JSONValue = ["type": "error", "reason": .string(reason)]
        return Array(value.compactData())
    }
}
