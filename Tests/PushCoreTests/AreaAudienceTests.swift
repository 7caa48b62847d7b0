import APNsCore
import Foundation
import PushCore
import Testing

@Suite("Area audience")
struct AreaAudienceTests {
    static func job(audience: JSONValue, pushType: String = "alert") -> JSONValue {
        [
            "app": "news", "environment": "sandbox", "audience": audience, "headers": ["push-type": .string(pushType)],
            "notification": ["aps": ["alert": "Rain in 10 minutes"]],
        ]
    }

    static let paris: JSONValue = ["lat": 48.8566, "lon": 2.3522, "radius-km": 10]

    @Test("an area, alone or with tags, decodes and encodes back")
    func roundTrip() throws {
        let area = GeoArea(center: GeoPoint(latitude: 48.8566, longitude: 2.3522), radiusKilometres: 10)
        let alone = try PushJob.decodeAndValidate(from: Self.job(audience: ["area": Self.paris]).compactData())
        #expect(alone.audience == .area(area, tags: nil))
        #expect(alone.audience.kind == "area")
        #expect(alone.audience.addressedTags.isEmpty)
        let tagged = try PushJob.decodeAndValidate(
            from: Self.job(audience: ["area": Self.paris, "tags": ["all": ["rain"], "none": ["muted"]]]).compactData())
        #expect(tagged.audience == .area(area, tags: TagExpression(all: ["rain"], none: ["muted"])))
        #expect(tagged.audience.addressedTags == ["rain"])
        for job in [alone, tagged] {
            #expect(try PushJob.decodeAndValidate(from: job.jsonData()).audience == job.audience)
            #expect(PushJobSummary(job).listedRecipients == nil)
        }
    }

    @Test(
        "a bad area is refused naming its field",
        arguments: [
            (["area": ["lat": 95, "lon": 2, "radius-km": 10]], "audience.area.lat", MessageValidationError.Code.invalidValue),
            (["area": ["lat": 48, "lon": -181, "radius-km": 10]], "audience.area.lon", .invalidValue),
            (["area": ["lat": 48, "lon": 2, "radius-km": 0]], "audience.area.radius-km", .invalidValue),
            (["area": ["lat": 48, "lon": 2, "radius-km": 20_001]], "audience.area.radius-km", .invalidValue),
            (["area": ["lat": 48, "lon": 2]], "audience.area.radius-km", .missingField),
            (["area": ["lat": "48", "lon": 2, "radius-km": 1]], "audience.area.lat", .invalidType),
            (["area": ["lat": 48, "lon": 2, "radius-km": 1, "unit": "mi"]], "audience.area.unit", .unknownField),
            (["area": Self.paris, "broadcast": true], "audience", .ambiguousAudience),
            (["area": Self.paris, "tags": ["none": ["x"]]], "audience.tags", .emptyTagExpression),
        ] as [(JSONValue, String, MessageValidationError.Code)])
    func refused(audience: JSONValue, field: String, code: MessageValidationError.Code) {
        do {
            _ = try PushJob.decodeAndValidate(from: Self.job(audience: audience).compactData())
            Issue.record("accepted \(audience)")
        } catch {
            #expect(error.field == field)
            #expect(error.code == code)
        }
    }

    @Test("an area is of device tokens")
    func deviceTokensOnly() {
        do {
            _ = try PushJob.decodeAndValidate(from: Self.job(audience: ["area": Self.paris], pushType: "voip").compactData())
            Issue.record("a VoIP job to an area accepted")
        } catch {
            #expect(error.field == "headers.push-type")
        }
    }

    @Test("a point is coarsened to a cell of the precision, the same for every point in it")
    func coarsening() {
        let points = [
            GeoPoint(latitude: 48.8566, longitude: 2.3522), GeoPoint(latitude: -33.8688, longitude: 151.2093),
            GeoPoint(latitude: 84.9, longitude: 179.99), GeoPoint(latitude: -85.05, longitude: -179.999), GeoPoint(latitude: 0, longitude: 0),
            GeoPoint(latitude: 64.1466, longitude: -21.9426),
        ]
        for precision in [0.01, 1, 5, 100] {
            for point in points {
                let coarse = point.coarsened(toKilometres: precision)
                #expect(GeoPoint.check(latitude: coarse.latitude, longitude: coarse.longitude) == nil, "\(coarse) in range")
                // Half a cell's diagonal, and what the snapping to 1e-6 degrees adds.
                #expect(coarse.kilometres(to: point) <= precision * 0.71 + 0.001, "\(point) → \(coarse) at \(precision) km")
                #expect(coarse.coarsened(toKilometres: precision) == coarse, "snapping twice changes nothing")
            }
        }
        // Points a few metres apart fall in one cell; a report does not say where in it.
        let a = GeoPoint(latitude: 48.8566, longitude: 2.3522).coarsened(toKilometres: 1)
        let b = GeoPoint(latitude: 48.8567, longitude: 2.3523).coarsened(toKilometres: 1)
        #expect(a == b)
        #expect(a != GeoPoint(latitude: 48.8566, longitude: 2.3522))
    }

    @Test("distances and circles")
    func distances() {
        let paris = GeoPoint(latitude: 48.8566, longitude: 2.3522)
        let london = GeoPoint(latitude: 51.5074, longitude: -0.1278)
        #expect(abs(paris.kilometres(to: london) - 343.5) < 1)
        #expect(paris.kilometres(to: paris) == 0)
        #expect(GeoArea(center: paris, radiusKilometres: 344).contains(london))
        #expect(!GeoArea(center: paris, radiusKilometres: 343).contains(london))
    }
}
