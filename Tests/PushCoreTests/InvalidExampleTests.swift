import Foundation
import PushCore
import Testing

/// Every example in schemas/examples/invalid/ is rejected at the field its expectation names.
struct InvalidExampleTests {
    struct Expectation: Decodable {
        let field: String
        let code: String
        let swiftOnly: String?

        enum CodingKeys: String, CodingKey {
            case field, code
            case swiftOnly = "swift-only"
        }
    }

    static func expectations() throws -> [String: Expectation] {
        try JSONDecoder().decode([String: Expectation].self, from: Data(contentsOf: Fixtures.expectationsFile))
    }

    @Test func everyInvalidExampleHasAnExpectation() throws {
        let names = Fixtures.invalidExampleFiles.map(\.lastPathComponent)
        #expect(names.count >= 10)
        #expect(Set(names) == Set(try Self.expectations().keys))
    }

    @Test(arguments: Fixtures.invalidExampleFiles.map(\.lastPathComponent))
    func invalidExampleIsRejectedAtItsField(name: String) throws {
        let expectation = try #require(try Self.expectations()[name])
        let data = try Data(contentsOf: Fixtures.invalidExamples.appendingPathComponent(name))
        let error = #expect(throws: MessageValidationError.self) { try PushJob.decodeAndValidate(from: data) }
        #expect(error?.field == expectation.field)
        #expect(error?.code.rawValue == expectation.code)
        #expect(error?.message.isEmpty == false)
    }
}
