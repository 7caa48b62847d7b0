import Foundation

/// A point on Earth in degrees, within what Redis's geo index can hold: latitude
/// ±85.05112878 (the Web Mercator limit), longitude ±180.
public struct GeoPoint: Hashable, Sendable {
    /// Degrees north (negative: south), ``latitudes``.
    public var latitude: Double
    /// Degrees east (negative: west), ``longitudes``.
    public var longitude: Double

    /// The latitudes Redis's `GEOADD` and `GEOSEARCH` accept.
    public static let latitudes: ClosedRange<Double> = -85.05112878...85.05112878
    /// The longitudes Redis's `GEOADD` and `GEOSEARCH` accept.
    public static let longitudes: ClosedRange<Double> = -180...180

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The error for the first coordinate out of range, naming `<prefix>lat` or `<prefix>lon`;
    /// `nil` when both are in range.
    public static func check(latitude: Double, longitude: Double) -> (field: String, message: String)? {
        guard latitudes.contains(latitude) else {
            return ("lat", "must be a latitude from -85.05112878 to 85.05112878, is \(latitude)")
        }
        guard longitudes.contains(longitude) else {
            return ("lon", "must be a longitude from -180 to 180, is \(longitude)")
        }
        return nil
    }

    /// Kilometres along the Earth's surface to `other` (haversine, mean radius 6,371 km).
    public func kilometres(to other: GeoPoint) -> Double {
        let radians = Double.pi / 180
        let dLat = (other.latitude - latitude) * radians
        let dLon = (other.longitude - longitude) * radians
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(latitude * radians) * cos(other.latitude * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * 6_371 * asin(min(1, a.squareRoot()))
    }

    /// This point snapped to a grid of cells about `precisionKm` wide, so that what is stored of a
    /// device says where it is to that precision and no better: the latitude to a multiple of
    /// `precisionKm` / 111.2 degrees, the longitude to a multiple of that step widened by the
    /// latitude (cells stay about `precisionKm` wide towards the poles). The result is within
    /// `precisionKm` of the point and still in range.
    ///
    /// - Precondition: `precisionKm` is positive.
    public func coarsened(toKilometres precisionKm: Double) -> GeoPoint {
        precondition(precisionKm > 0, "the precision must be positive")
        // To a millionth of a degree (about 0.1 m): the cell's corner, written short.
        func short(_ degrees: Double) -> Double { (degrees * 1e6).rounded() / 1e6 }
        let latitudeStep = min(precisionKm / Self.kilometresPerDegree, 90)
        // Within the range once written short: the limits themselves have 8 decimals.
        let limit = 85.051128
        let latitude = short(min(max((latitude / latitudeStep).rounded() * latitudeStep, -limit), limit))
        // A whole number of cells around the parallel, so that the cells on either side of the
        // antimeridian meet.
        let widening = max(cos(latitude * .pi / 180), 0.01)
        let longitudeStep = 360 / (360 / min(latitudeStep / widening, 360)).rounded(.up)
        var longitude = (longitude / longitudeStep).rounded() * longitudeStep
        if longitude > 180 { longitude -= 360 }
        if longitude < -180 { longitude += 360 }
        return GeoPoint(latitude: latitude, longitude: short(longitude))
    }

    /// `{"lat": …, "lon": …}`: how a job's area and a device's location write a point.
    public var jsonObject: JSONObject {
        ["lat": Self.number(latitude), "lon": Self.number(longitude)]
    }

    /// A coordinate or distance as a JSON number (`null` for NaN or an infinity, which no checked
    /// value is).
    static func number(_ value: Double) -> JSONValue {
        JSONNumber(value).map(JSONValue.number) ?? .null
    }

    /// Kilometres per degree of latitude (the mean radius's).
    static let kilometresPerDegree = 6_371 * Double.pi / 180
}

/// A circle on Earth: the devices a job's `audience.area` reaches are those whose last reported
/// location lies within ``radiusKilometres`` of ``center``.
public struct GeoArea: Hashable, Sendable {
    public var center: GeoPoint
    /// Kilometres, in ``radii``.
    public var radiusKilometres: Double

    /// The radii an area may have: more than 0, at most half the Earth's circumference.
    public static let radii: ClosedRange<Double> = 0.001...20_000

    public init(center: GeoPoint, radiusKilometres: Double) {
        self.center = center
        self.radiusKilometres = radiusKilometres
    }

    /// Whether `point` lies in the area.
    public func contains(_ point: GeoPoint) -> Bool {
        center.kilometres(to: point) <= radiusKilometres
    }
}

extension GeoArea {
    static let fieldNames: Set<String> = ["lat", "lon", "radius-km"]

    /// Decodes `{"lat": …, "lon": …, "radius-km": …}`, each required and in range.
    init(json: JSONValue, at path: FieldPath) throws(MessageValidationError) {
        let object = try json.decodeObject(at: path)
        try object.rejectUnknownKeys(Self.fieldNames, at: path)
        func number(_ key: String) throws(MessageValidationError) -> Double {
            guard let value = object[key] else { throw MessageValidationError(path.key(key), .missingField, "is required") }
            return try value.decodeNumber(at: path.key(key))
        }
        let latitude = try number("lat")
        let longitude = try number("lon")
        if let problem = GeoPoint.check(latitude: latitude, longitude: longitude) {
            throw MessageValidationError(path.key(problem.field), .invalidValue, problem.message)
        }
        let radius = try number("radius-km")
        guard Self.radii.contains(radius) else {
            throw MessageValidationError(path.key("radius-km"), .invalidValue, "must be from 0.001 to 20000 kilometres, is \(radius)")
        }
        self.init(center: GeoPoint(latitude: latitude, longitude: longitude), radiusKilometres: radius)
    }

    /// The `area` object.
    public var jsonValue: JSONValue {
        var object = center.jsonObject
        object["radius-km"] = GeoPoint.number(radiusKilometres)
        return .object(object)
    }
}
