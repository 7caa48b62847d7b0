extension StoreError {
    /// A stable, extensible error code: switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// An app id that is empty, longer than 64 bytes, or not made of `A-Z a-z 0-9 . _ -`.
        public static let invalidApp = Self(rawValue: "invalid-app")
        /// A tag that is empty, longer than 128 bytes of UTF-8, or holds a control character.
        public static let invalidTag = Self(rawValue: "invalid-tag")
        /// An openid that is empty, longer than 128 bytes of UTF-8, or holds a control character.
        public static let invalidOpenID = Self(rawValue: "invalid-openid")
        /// A tag expression with neither a non-empty `all` nor a non-empty `any`, or with more
        /// tags than one Redis script call takes.
        public static let invalidTagExpression = Self(rawValue: "invalid-tag-expression")
        /// A number out of its range: a shard, a scan count, a timestamp, a shard count.
        public static let invalidArgument = Self(rawValue: "invalid-argument")
        /// The call needs a registered device and the token is not registered for the app.
        public static let deviceNotRegistered = Self(rawValue: "device-not-registered")
        /// The devices could not be changed now: a reshard holds their bucket, or keeps
        /// changing the app's layout. Retrying later succeeds.
        public static let busy = Self(rawValue: "registry-busy")
        /// Redis answered with something the registry's scripts never return (a key of the
        /// wrong type, a foreign writer): the data is not what the key model says.
        public static let unexpectedReply = Self(rawValue: "unexpected-reply")

        public var description: String { rawValue }
    }
}
