public import Foundation

/// One message of `push.dlq`: something the pipeline could not process, with the reason and
/// enough context to find, fix and replay it (see `schemas/push-dlq.schema.json`).
///
/// Two kinds: a Kafka message that could not be processed (``original`` holds its bytes and
/// ``source`` where it was), and a notification that failed for good (``token`` and the APNs
/// ``status`` and ``reason``).
public struct DeadLetter: Hashable, Sendable, Codable {
    /// Where an unprocessable message was read from.
    public struct Source: Hashable, Sendable, Codable {
        public var topic: String
        public var partition: Int32
        public var offset: Int64

        public init(topic: String, partition: Int32, offset: Int64) {
            self.topic = topic
            self.partition = partition
            self.offset = offset
        }
    }

    /// A stable code: a job validation code (`malformed-json`, `payload-too-large`, …),
    /// `unknown-app`, `environment-not-enabled`, `resend-expired`, or an APNs reason
    /// (`BadTopic`, …).
    public var reason: String
    /// A sentence for people.
    public var message: String
    /// The field at fault, for a rejected job.
    public var field: String?
    public var app: String?
    public var jobID: String?
    public var token: String?
    /// The APNs status of a failed notification.
    public var status: Int?
    /// APNs attempts made for a failed notification.
    public var attempts: Int?
    public var source: Source?
    /// The bytes of the unprocessable message (base64 in JSON); only the first ones when
    /// ``originalSize`` is set.
    public var original: Data?
    /// The unprocessable message's full size in bytes, set when ``original`` holds only its
    /// first bytes: a letter must fit one Kafka message (see ``fitting(within:)``).
    public var originalSize: Int?
    /// When the letter was written, milliseconds since 1970.
    public var deadLetteredAt: Int64

    enum CodingKeys: String, CodingKey {
        case reason, message, field, app, token, status, attempts, source, original
        case jobID = "job-id"
        case originalSize = "original-size"
        case deadLetteredAt = "dead-lettered-at"
    }

    public init(
        reason: String,
        message: String,
        field: String? = nil,
        app: String? = nil,
        jobID: String? = nil,
        token: String? = nil,
        status: Int? = nil,
        attempts: Int? = nil,
        source: Source? = nil,
        original: Data? = nil,
        deadLetteredAt: Int64
    ) {
        self.reason = reason
        self.message = message
        self.field = field
        self.app = app
        self.jobID = jobID
        self.token = token
        self.status = status
        self.attempts = attempts
        self.source = source
        self.original = original
        self.deadLetteredAt = deadLetteredAt
    }

    /// The letter as JSON.
    public func jsonData() -> Data {
        let encoder = JSONEncoder()
        // Base64 holds slashes: escaped, they would make a letter's size unpredictable.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings, numbers and data cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// The letter cut to at most `maxBytes` of JSON: unchanged when it fits; otherwise its
    /// ``original`` keeps as many of the first bytes as fit, with ``originalSize`` saying how
    /// many there were. When even without the original bytes the letter is too large (its texts
    /// can echo what the message held: an unknown environment, a shard header), its texts
    /// (``message``, ``field``, ``app``, ``jobID``, ``token``, ``reason``, the source's topic)
    /// are first shortened to at most 256 Unicode scalars each, and fewer if need be, ending in
    /// `…`. A message too large to dead-letter whole must still reach `push.dlq`: a letter that
    /// cannot be published would leave its message uncommitted for ever. Any limit that holds
    /// the letter with empty texts and no original (about 300 bytes) is met.
    public func fitting(within maxBytes: Int) -> DeadLetter {
        guard jsonData().count > maxBytes else { return self }
        return cut(to: maxBytes)
    }

    /// The letter as JSON of at most `maxBytes` (see ``fitting(within:)``), encoded once when
    /// it fits, as nearly every letter does.
    public func jsonData(within maxBytes: Int) -> Data {
        let whole = jsonData()
        guard whole.count > maxBytes else { return whole }
        return cut(to: maxBytes).jsonData()
    }

    /// The longest a text stays when a letter must be cut, in Unicode scalars.
    static let cutTextScalars = 256

    private func cut(to maxBytes: Int) -> DeadLetter {
        var cut = self
        if let original {
            cut.original = Data()
            cut.originalSize = original.count
        }
        var scalars = Self.cutTextScalars * 2
        while cut.jsonData().count > maxBytes && scalars > 0 {
            scalars /= 2
            cut.shortenTexts(to: scalars)
        }
        guard let original else { return cut }
        var room = maxBytes - cut.jsonData().count
        while room >= 4 {
            // Base64 writes 4 characters for every 3 bytes.
            cut.original = original.prefix(room / 4 * 3)
            let excess = cut.jsonData().count - maxBytes
            if excess <= 0 { return cut }
            room -= excess
        }
        cut.original = nil
        return cut
    }

    private mutating func shortenTexts(to scalars: Int) {
        func shortened(_ text: String) -> String {
            guard text.unicodeScalars.count > scalars else { return text }
            guard scalars > 0 else { return "" }
            return String(String.UnicodeScalarView(text.unicodeScalars.prefix(scalars - 1))) + "…"
        }
        reason = shortened(reason)
        message = shortened(message)
        field = field.map(shortened)
        app = app.map(shortened)
        jobID = jobID.map(shortened)
        token = token.map(shortened)
        if var place = source {
            place.topic = shortened(place.topic)
            source = place
        }
    }

    /// Parses a letter.
    public static func decode(from data: Data) throws -> DeadLetter {
        try JSONDecoder().decode(DeadLetter.self, from: data)
    }
}
