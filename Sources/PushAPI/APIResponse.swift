import HTTPTypes
import Hummingbird
import NIOCore
import PushCore

/// Builds the API's responses: compact JSON with its content type.
enum APIResponse {
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        let data = value.compactData()
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func text(_ bytes: [UInt8], contentType: String) -> Response {
        Response(status: .ok, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

extension JSONValue {
    init(_ value: Int) {
        self = .number(JSONNumber(value))
    }

    init(_ value: Int64) {
        self = .number(JSONNumber(Int(value)))
    }

    init(_ strings: [String]) {
        self = .array(strings.map { .string($0) })
    }

    init(_ counts: [String: Int]) {
        var object = JSONObject()
        for key in counts.keys.sorted() {
            object[key] = JSONValue(counts[key] ?? 0)
        }
        self = .object(object)
    }
}
