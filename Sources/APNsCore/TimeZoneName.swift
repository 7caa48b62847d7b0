public import Foundation

/// The rule for a time zone name, for an app's statistics (`apps.<id>.time-zone`) and for a
/// device (`time-zone` on bind): an IANA name (`Europe/Paris`, `America/New_York`, `UTC`) that
/// the machine's time zone database knows, spelled as the database spells it. Offsets that
/// Foundation would also read (`GMT+5`, `UTC+1`) are not names and are refused: a zone's rules
/// (daylight saving time) come with its name only.
public enum TimeZoneName {
    /// The longest name accepted (the database's longest is about 30 characters).
    public static let maxLength = 64

    /// Why `name` is not a time zone name; `nil` when it is one.
    public static func problem(_ name: String) -> String? {
        guard timeZone(name) == nil else { return nil }
        return "'\(name.prefix(maxLength))' is not a time zone of the IANA database (e.g. Europe/Paris, America/New_York, UTC)"
    }

    /// The time zone `name` names; `nil` when it names none.
    public static func timeZone(_ name: String) -> TimeZone? {
        guard !name.isEmpty, name.utf8.count <= maxLength, let zone = TimeZone(identifier: name) else { return nil }
        // Foundation reads UTC as GMT; every other name reads back as itself.
        return zone.identifier == name || name == "UTC" ? zone : nil
    }
}
