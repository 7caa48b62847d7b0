import Foundation
import Testing

@testable import APNsSimulator

/// The payload check against Foundation's parser.
@Suite("Simulator payload check")
struct APNsSimulatorPayloadCheckerTests {
    @Test(
        "agrees with JSONSerialization on aps payloads",
        arguments: [
            #"{"aps":{}}"#, #" { "aps" : { "alert" : "hi" } } "#, #"{"aps":{"alert":{"title":"a\"b\u00e9"}},"x":[1,-2.5e3,true,false,null]}"#,
            #"{"aps":1}"#, #"{"apsx":{}}"#, #"{}"#, "[]", "", "{", #"{"aps":{}"#, #"{"aps":{}} x"#,
            #"{"aps":{"a":01}}"#, #"{"aps":{"a":"\x"}}"#, #"{"aps":{"a":tru}}"#,
            #"{"a":{"b":{}},"aps":{"c":[{"d":"e"}]}}"#, "{\"aps\":{\"a\":\"\n\"}}",
        ])
    func agrees(_ payload: String) {
        let foundation =
            (try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any])
            .map { $0["aps"] is [String: Any] } ?? false
        #expect(APNsSimulatorPayloadChecker.isAPSPayload(Array(payload.utf8)) == foundation)
    }

    @Test("trailing commas are not JSON (Foundation tolerates them)")
    func trailingCommas() {
        #expect(!APNsSimulatorPayloadChecker.isAPSPayload(Array(#"{"aps":{},}"#.utf8)))
        #expect(!APNsSimulatorPayloadChecker.isAPSPayload(Array(#"{"aps":{"a":[1,]}}"#.utf8)))
    }
}
