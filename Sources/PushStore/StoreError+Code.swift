extension StoreError {
    /// A stable, extensible error code: switch with a `default` case.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String

        package init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// An app id that is empty, longer than 64 bytes, or not made of `A-Z a-z 0-9 . _ -`.
        package static let invalidApp = Self(rawValue: "invalid-app")
        /// A tag that is empty, longer than 128 bytes of UTF-8, or holds a control character.
        package static let invalidTag = Self(rawValue: "invalid-tag")
        /// An openid that is empty, longer than 128 bytes of UTF-8, or holds a control character.
        package static let invalidOpenID = Self(rawValue: "invalid-openid")
        /// A tag expression with neither a non-empty `all` nor a non-empty `any`, or with more
        /// tags than one Redis script call takes.
        package static let invalidTagExpression = Self(rawValue: "invalid-tag-expression")
        /// A number out of its range: a shard, a scan count, a timestamp, a shard count.
        package static let invalidArgument = Self(rawValue: "invalid-argument")
        /// The call needs a registered device and the token is not registered for the app.
        package static let deviceNotRegistered = Self(rawValue: "device-not-registered")
        /// The devices could not be changed now: a reshard holds their bucket, or keeps
        /// changing the app's layout. Retrying later succeeds.
        package static let busy = Self(rawValue: "registry-busy")
        /// Redis answered with something the registry's scripts never return (a key of the
        /// wrong type, a foreign writer): the data is not what the key model says.
        package static let unexpectedReply = Self(rawValue: "unexpected-reply")

        package var description: String { rawValue }
    }
}
