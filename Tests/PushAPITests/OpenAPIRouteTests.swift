import Foundation
import PushAPI
import Testing
import Yams

/// `schemas/openapi.yaml` describes exactly the routes the server answers: the same methods,
/// paths, operation ids and key scopes (`x-key-scope`) as the server's one route table.
@Suite struct OpenAPIRouteTests {
    static var specURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("schemas/openapi.yaml")
    }

    @Test func theSpecListsExactlyTheServersRoutes() throws {
        let text = try String(contentsOf: Self.specURL, encoding: .utf8)
        let spec = try #require(try Yams.load(yaml: text) as? [String: Any])
        #expect((spec["openapi"] as? String)?.hasPrefix("3.1") == true)
        let paths = try #require(spec["paths"] as? [String: Any])
        var documented: Set<String> = []
        for (path, item) in paths {
            let operations = try #require(item as? [String: Any], "\(path)")
            for method in ["get", "put", "post", "delete", "patch", "head", "options"] {
                guard let operation = operations[method] as? [String: Any] else { continue }
                let scope = operation["x-key-scope"] as? String ?? "all"
                documented.insert("\(method.uppercased()) \(path) \(operation["operationId"] as? String ?? "(no operationId)") \(scope)")
            }
        }
        let served = Set(APIRoutes.table.map { "\($0.method) \($0.path) \($0.operationID) \($0.scope)" })
        #expect(documented.subtracting(served).isEmpty, "documented but not served: \(documented.subtracting(served).sorted())")
        #expect(served.subtracting(documented).isEmpty, "served but not documented: \(served.subtracting(documented).sorted())")
    }
}
