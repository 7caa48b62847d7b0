import Foundation

/// The job documents `pushfleet demo` publishes: what app backends would send, including a few
/// malformed ones that must end in the dead-letter topic.
enum DemoJobs {
    struct Document {
        let key: String
        let bytes: [UInt8]
    }

    /// `count` valid jobs cycling through the audience kinds, then three bad ones.
    static func make(count: Int) -> [Document] {
        var documents = (0..<count).map { index in
            let id = "demo-\(index + 1)"
            return Document(key: id, bytes: Array(validJob(id: id, index: index).utf8))
        }
        documents.append(Document(key: "demo-not-json", bytes: Array("{\"app\": \"com.example.news\", ".utf8)))
        documents.append(
            Document(
                key: "demo-background-priority-10",
                bytes: Array(
                    """
                    {"id":"demo-background-priority-10","app":"com.example.news","environment":"sandbox",
                     "audience":{"broadcast":true},"notification":{"aps":{"content-available":1}},
                     "headers":{"push-type":"background","priority":10}}
                    """.utf8)))
        let oversized = String(repeating: "x", count: 4_200)
        documents.append(
            Document(
                key: "demo-oversized",
                bytes: Array(
                    """
                    {"id":"demo-oversized","app":"com.example.news","environment":"production",
                     "audience":{"broadcast":true},"notification":{"aps":{"alert":"\(oversized)"}},
                     "headers":{"push-type":"alert"}}
                    """.utf8)))
        return documents
    }

    private static func validJob(id: String, index: Int) -> String {
        let token = String(repeating: String(format: "%02x", index % 256), count: 32)
        let audience: String
        switch index % 4 {
        case 0: audience = #"{"tokens":["\#(token)"]}"#
        case 1: audience = #"{"openids":["user-\#(index)","user-\#(index + 1)"]}"#
        case 2: audience = #"{"tags":{"all":["lang:en"],"any":["topic:sports"],"none":["muted"]}}"#
        default: audience = #"{"broadcast":true}"#
        }
        return """
            {"id":"\(id)","app":"com.example.news","environment":"\(index.isMultiple(of: 2) ? "production" : "sandbox")",
             "audience":\(audience),
             "notification":{"aps":{"alert":{"title":"Edition \(index + 1)","body":"Today's headlines"},"sound":"default"},"article":\(index)},
             "headers":{"push-type":"alert","priority":10,"collapse-id":"edition"}}
            """
    }
}
