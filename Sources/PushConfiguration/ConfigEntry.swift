/// One key/value pair of a mapping in the configuration tree.
struct ConfigEntry: Sendable {
    /// The key's text.
    var key: String
    /// Where the key was written.
    var keyOrigin: ConfigOrigin
    /// The value.
    var value: ConfigNode
}
