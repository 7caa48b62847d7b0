/// The wait a `Retry-After` answer header asks for (RFC 9110 §10.2.3): a number of seconds, or
/// an HTTP date in any of the three forms a recipient must accept (IMF-fixdate
/// `Sun, 06 Nov 1994 08:49:37 GMT`, the obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT` and
/// asctime `Sun Nov  6 08:49:37 1994`).
///
/// APNs documents no `Retry-After`; a server in front of it, or APNs itself on a 429 or 503, may
/// still send one. The client reads it into ``APNs/APNsResponse/retryAfter`` and the pipeline's
/// resend buffer does not send the notification again before it has passed.
public enum APNsRetryAfter {
    /// The longest wait honoured (one day): a longer one is cut to it. A notification kept
    /// aside that long is already past the resend buffer's age limit.
    public static let longest: Duration = .seconds(86_400)

    /// The wait `value` asks for at `nowMilliseconds` (since 1970), between zero (a date in
    /// the past) and ``longest``; `nil` when `value` is neither form.
    public static func delay(_ value: String, nowMilliseconds: Int64) -> Duration? {
        let text = value.drop { $0 == " " || $0 == "\t" }.trimmingSuffixWhitespace
        guard let first = text.utf8.first else { return nil }
        if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) {
            guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            // Digits beyond what Int64 holds are a wait longer than `longest` too.
            let seconds = Int64(text) ?? Int64.max
            return .seconds(min(seconds, Int64(longest.components.seconds)))
        }
        guard let date = httpDateSeconds(text, nowMilliseconds: nowMilliseconds) else { return nil }
        let waitMilliseconds = date.multipliedReportingOverflow(by: 1000)
        guard !waitMilliseconds.overflow else { return nil }
        let wait = waitMilliseconds.partialValue - nowMilliseconds
        return .milliseconds(min(max(wait, 0), Int64(longest.components.seconds) * 1000))
    }

    /// Seconds since 1970 of an HTTP date, or `nil`.
    private static func httpDateSeconds(_ text: Substring, nowMilliseconds: Int64) -> Int64? {
        // Commas and the RFC 850 date's dashes separate fields like spaces do.
        let fields = text.split { $0 == " " || $0 == "," || $0 == "-" }
        let day: Substring
        let month: Substring
        let year: Substring
        let time: Substring
        switch fields.count {
        case 6 where fields[5] == "GMT":  // IMF-fixdate, RFC 850
            (day, month, year, time) = (fields[1], fields[2], fields[3], fields[4])
        case 5:  // asctime
            (month, day, time, year) = (fields[1], fields[2], fields[3], fields[4])
        default:
            return nil
        }
        guard let monthNumber = months.firstIndex(of: String(month)).map({ $0 + 1 }),
            let dayNumber = Int64(day), (1...31).contains(dayNumber),
            var yearNumber = Int64(year), year.count == 4 || year.count == 2
        else { return nil }
        let clock = time.split(separator: ":")
        guard clock.count == 3, let hour = Int64(clock[0]), let minute = Int64(clock[1]), let second = Int64(clock[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        if year.count == 2 {
            // RFC 9110: a two-digit year more than 50 years ahead is the most recent past one.
            let thisYear = 1970 + nowMilliseconds / 1000 / 31_556_952
            yearNumber += 2000
            if yearNumber > thisYear + 50 { yearNumber -= 100 }
        }
        let days = Int64(CivilDays.since1970(year: Int(yearNumber), month: monthNumber, day: Int(dayNumber)))
        return days * 86_400 + hour * 3_600 + minute * 60 + second
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}

extension Substring {
    fileprivate var trimmingSuffixWhitespace: Substring {
        var text = self
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
