import Foundation
import PushCore
import Testing

/// The JSON parser and writer keep order and number text, write compactly and reject what
/// RFC 8259 does not allow.
struct JSONValueTests {
    static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try JSONValue(parsing: Data(text.utf8))
    }

    static func compact(_ value: JSONValue) -> String {
        String(decoding: value.compactData(), as: UTF8.self)
    }

    @Test(arguments: [
        #"{"z":1,"a":2,"m":{"y":[],"b":{}}}"#,
        #"[1,-0,2.50,1e3,1E+3,-1.5e-7,9007199254740993,123456789012345678901234567890]"#,
        #"{"s":"tab\tquote\"slash/backslash\\ nul\u0000 é 🚀"}"#,
        #"[true,false,null,"",{},[]]"#,
    ])
    func compactTextRoundTrips(text: String) throws {
        #expect(Self.compact(try Self.parse(text)) == text)
    }

    @Test func whitespaceIsDropped() throws {
        let value = try Self.parse(" {\n\t\"b\" : [ 1 , 2 ] ,\r\n \"a\" : null } ")
        #expect(Self.compact(value) == #"{"b":[1,2],"a":null}"#)
        #expect(value.objectValue?.keys == ["b", "a"])
    }

    @Test func escapesAreDecoded() throws {
        let value = try Self.parse(#"["\u00e9\ud83d\ude80\/\b\f\n\r\t"]"#)
        #expect(value == ["é🚀/\u{08}\u{0C}\n\r\t"])
        #expect(Self.compact(value) == #"["é🚀/\b\f\n\r\t"]"#)
    }

    @Test func numbersKeepTheirText() throws {
        let value = try Self.parse("[2.0,1e2,9007199254740993]")
        #expect(value.arrayValue?.map { $0.numberValue?.text } == ["2.0", "1e2", "9007199254740993"])
        #expect(value.arrayValue?.map(\.intValue) == [2, 100, 9_007_199_254_740_993])
        #expect(JSONValue.number(JSONNumber(0.1)!) != JSONValue.number(JSONNumber(text: "0.10")!))
    }

    @Test(arguments: [
        "", " ", "{", "[1,]", #"{"a":1,}"#, "{'a':1}", "[01]", "[1.]", "[.5]", "[+1]", "[-]", "[1e]",
        "[NaN]", "[Infinity]", "tru", "nul", "[1] [2]", "// c\n{}", #"["\x"]"#, #"["\u12"]"#,
        #"["\ud800"]"#, #"["\udc00"]"#, "[\"a\u{01}\"]", "[\"line\nbreak\"]", #"{"a":1,"a":2}"#,
        #"{1:2}"#,
    ])
    func malformedTextIsRejected(text: String) {
        #expect(throws: JSONSyntaxError.self) { try Self.parse(text) }
    }

    @Test func invalidUTF8IsRejected() {
        #expect(throws: JSONSyntaxError.self) { try JSONValue(parsing: Data([0x22, 0xC3, 0x28, 0x22])) }
    }

    @Test func deepNestingIsRejected() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONSyntaxError.self) { try Self.parse(deep) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: Never.self) { try Self.parse(fine) }
    }

    @Test func syntaxErrorsSayWhere() {
        let error = #expect(throws: JSONSyntaxError.self) { try Self.parse("{\n  \"a\": tru\n}") }
        #expect(error?.line == 2)
        #expect(error?.column == 8)
    }

    @Test func objectKeepsInsertionOrderAndReplacesInPlace() {
        var object: JSONObject = ["c": 1, "a": 2]
        object["b"] = 3
        object["c"] = 4
        #expect(object.keys == ["c", "a", "b"])
        #expect(object["c"] == 4)
        object["a"] = nil
        #expect(object.keys == ["c", "b"])
        #expect(object.map(\.key) == ["c", "b"])
        #expect(object != ["b": 3, "c": 4])
        #expect(object == ["c": 4, "b": 3])
    }

    @Test(arguments: [(1.0, "1"), (-0.5, "-0.5"), (1e21, "1e+21"), (0.1, "0.1"), (12.5, "12.5")])
    func doubleNumbersAreWrittenShortest(value: Double, text: String) {
        #expect(JSONNumber(value)?.text == text)
    }

    @Test func nonFiniteDoublesHaveNoNumber() {
        #expect(JSONNumber(Double.nan) == nil)
        #expect(JSONNumber(Double.infinity) == nil)
        #expect(JSONNumber(text: "1.") == nil)
    }
}
