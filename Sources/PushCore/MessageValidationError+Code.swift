extension MessageValidationError {
    /// A stable, extensible error code; its `rawValue` is what `--json` output prints.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The bytes are not a JSON text.
        public static let malformedJSON = Self(rawValue: "malformed-json")
        /// The file could not be read.
        public static let unreadable = Self(rawValue: "unreadable")
        /// A required field is absent.
        public static let missingField = Self(rawValue: "missing-field")
        /// A field the schema does not allow here.
        public static let unknownField = Self(rawValue: "unknown-field")
        /// A value of the wrong JSON type.
        public static let invalidType = Self(rawValue: "invalid-type")
        /// A value of the right type outside its allowed range, length or set.
        public static let invalidValue = Self(rawValue: "invalid-value")
        /// An `environment` other than `sandbox` or `production`.
        public static let unknownEnvironment = Self(rawValue: "unknown-environment")
        /// A `push-type` APNs does not document.
        public static let unknownPushType = Self(rawValue: "unknown-push-type")
        /// A device token that is not an even number of hex digits (at most 200).
        public static let invalidToken = Self(rawValue: "invalid-token")
        /// More than 10,000 tokens in one job.
        public static let tooManyTokens = Self(rawValue: "too-many-tokens")
        /// An audience that names nobody: no selector, or an empty list.
        public static let emptyAudience = Self(rawValue: "empty-audience")
        /// An audience with more than one selector.
        public static let ambiguousAudience = Self(rawValue: "ambiguous-audience")
        /// A tag expression with neither a non-empty `all` nor a non-empty `any`.
        public static let emptyTagExpression = Self(rawValue: "empty-tag-expression")
        /// A `collapse-id` longer than 64 bytes of UTF-8.
        public static let collapseIDTooLong = Self(rawValue: "collapse-id-too-long")
        /// A priority the push type does not allow (10 with `background`).
        public static let priorityNotAllowed = Self(rawValue: "priority-not-allowed")
        /// A `headers.topic` that is not one of the app's bundle ids with the push type's suffix.
        public static let topicNotAllowed = Self(rawValue: "topic-not-allowed")
        /// An `app` the configuration does not know, or not enabled for the job's environment.
        public static let unknownApp = Self(rawValue: "unknown-app")
        /// A payload larger than APNs accepts for the push type (4096 bytes, 5120 for `voip`).
        public static let payloadTooLarge = Self(rawValue: "payload-too-large")

        public var description: String { rawValue }
    }
}
