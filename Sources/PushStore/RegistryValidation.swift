/// Input rules of the registry; each throws a ``DeviceRegistryError`` naming the field.
enum RegistryValidation {
    static let maxAppBytes = 64
    static let maxTagBytes = 128
    static let maxOpenIDBytes = 128
    /// Tags of one expression (all + any + none): every one is a key of one script call.
    static let maxExpressionTags = 1_000

    /// 1–64 bytes of `A-Z a-z 0-9 . _ -`: no braces (they would break the hash tag), no `:`
    /// (it would make `{a:openid:…}` and `{a:<shard>}` ambiguous across apps).
    static func app(_ app: String, field: String = "app") throws(DeviceRegistryError) {
        guard !app.isEmpty else {
            throw DeviceRegistryError(.invalidApp, field: field, message: "must not be empty")
        }
        guard app.utf8.count <= maxAppBytes else {
            throw DeviceRegistryError(.invalidApp, field: field, message: "is \(app.utf8.count) bytes, more than \(maxAppBytes)")
        }
        let allowed = app.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard allowed else {
            throw DeviceRegistryError(.invalidApp, field: field, message: "may hold only A-Z, a-z, 0-9, '.', '_' and '-'")
        }
    }

    static func tag(_ tag: String, field: String) throws(DeviceRegistryError) {
        try text(tag, field: field, code: .invalidTag, maxBytes: maxTagBytes, what: "tag")
    }

    static func tags(_ tags: [String], field: String) throws(DeviceRegistryError) {
        for (index, tag) in tags.enumerated() {
            try self.tag(tag, field: "\(field)[\(index)]")
        }
    }

    static func openID(_ openID: String, field: String = "openID") throws(DeviceRegistryError) {
        try text(openID, field: field, code: .invalidOpenID, maxBytes: maxOpenIDBytes, what: "openid")
    }

    static func environment(_ value: String) -> Bool {
        value == "sandbox" || value == "production"
    }

    private static func text(
        _ value: String,
        field: String,
        code: DeviceRegistryError.Code,
        maxBytes: Int,
        what: String
    ) throws(DeviceRegistryError) {
        guard !value.isEmpty else {
            throw DeviceRegistryError(code, field: field, message: "\(what) must not be empty")
        }
        guard value.utf8.count <= maxBytes else {
            throw DeviceRegistryError(code, field: field, message: "\(what) is \(value.utf8.count) bytes of UTF-8, more than \(maxBytes)")
        }
        if let scalar = value.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            throw DeviceRegistryError(code, field: field, message: "\(what) must not hold control characters (U+\(hex))")
        }
    }
}
