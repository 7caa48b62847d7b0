import Foundation
import PushConfiguration
import Testing

@Suite struct LineNumberTests {
    static let yaml = """
        # PushFleet
        kafka:
          bootstrap-servers: k

        apps:
          news:
            bundle-id: com.example.news
            auth: {pkcs12: {file: id.p12}}
          sports:
            bundle-id: com.example.sports
            auth:
              pkcs12:
                file: id.p12
            rate-per-second: 10
            burst: -3
        """

    @Test func badValueReportsItsLine() throws {
        let error = try #require(parseError(Self.yaml))
        #expect(error.key == "apps.sports.burst")
        #expect(error.line == 15)
        #expect(error.description == "apps.sports.burst: must be at least 1, got -3 (line 15)")
    }

    @Test func overriddenValueReportsTheVariableInsteadOfALine() throws {
        let error = try #require(parseError(Self.yaml, environment: ["PUSHFLEET__APPS__SPORTS__BURST": "0"]))
        #expect(error.key == "apps.sports.burst")
        #expect(error.line == nil)
        #expect(error.description == "apps.sports.burst: must be at least 1, got 0 (set by PUSHFLEET__APPS__SPORTS__BURST)")
    }

    @Test func missingKeyReportsTheLineOfItsMapping() throws {
        let error = try #require(
            parseError(
                Self.yaml
                    .replacingOccurrences(of: "burst: -3", with: "burst: 3")
                    .replacingOccurrences(of: "        file: id.p12\n", with: "        passphrase-file: p\n")))
        #expect(error.key == "apps.sports.auth.pkcs12.file")
        #expect(error.line == 13)
    }
}
