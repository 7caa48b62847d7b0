/// Input rules of the store (app ids, tags, openids, tokens…); each throws a ``StoreError`` naming the field.
enum StoreValidation {
    /// An app id is at most 64 bytes; a registry of one of its token kinds adds `~start~` and an
    /// attributes type of up to 64 (``TokenKind/registry(of:)``).
    static let maxAppBytes = 64 + 7 + 64
    static let maxTagBytes = 128
    static let maxOpenIDBytes = 128
    /// Tags of one expression (all + any + none): every one is a key of one script call.
    static let maxExpressionTags = 1_000

    /// 1–135 bytes of `A-Z a-z 0-9 . _ - ~`: no braces (they would break the hash tag), no `:`
    /// (it would make `{a:openid:…}` and `{a:<shard>}` ambiguous across apps). `~` joins an app
    /// and a token kind (`news~voip`, ``TokenKind/registry(of:)``); configured app ids never hold it.
    static func app(_ app: String, field: String = "app") throws(StoreError) {
        guard !app.isEmpty else {
            throw StoreError(.invalidApp, field: field, message: "must not be empty")
        }
        guard app.utf8.count <= maxAppBytes else {
            throw StoreError(.invalidApp, field: field, message: "is \(app.utf8.count) bytes, more than \(maxAppBytes)")
        }
        let allowed = app.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "~")
        }
        guard allowed else {
            throw StoreError(.invalidApp, field: field, message: "may hold only A-Z, a-z, 0-9, '.', '_', '-' and '~'")
        }
    }

    static func tag(_ tag: String, field: @autoclosure () -> String) throws(StoreError) {
        try text(tag, field: field(), code: .invalidTag, maxBytes: maxTagBytes, what: "tag")
    }

    static func tags(_ tags: [String], field: @autoclosure () -> String) throws(StoreError) {
        for (index, tag) in tags.enumerated() where problem(tag, maxBytes: maxTagBytes, what: "tag") != nil {
            try self.tag(tag, field: "\(field())[\(index)]")
        }
    }

    static func openID(_ openID: String, field: @autoclosure () -> String = "openID") throws(StoreError) {
        try text(openID, field: field(), code: .invalidOpenID, maxBytes: maxOpenIDBytes, what: "openid")
    }

    static func environment(_ value: String) -> Bool {
        value == "sandbox" || value == "production"
    }

    static func text(
        _ value: String,
        field: @autoclosure () -> String,
        code: StoreError.Code,
        maxBytes: Int,
        what: String
    ) throws(StoreError) {
        if let message = problem(value, maxBytes: maxBytes, what: what) {
            throw StoreError(code, field: field(), message: message)
        }
    }

    /// What is wrong with a name, tag or openid; `nil` when nothing is.
    private static func problem(_ value: String, maxBytes: Int, what: String) -> String? {
        guard !value.isEmpty else {
            return "\(what) must not be empty"
        }
        guard value.utf8.count <= maxBytes else {
            return "\(what) is \(value.utf8.count) bytes of UTF-8, more than \(maxBytes)"
        }
        // ASCII without C0 controls or DEL, the usual case, needs no Unicode tables.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return nil
        }
        if let scalar = value.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "\(what) must not hold control characters (U+\(hex))"
        }
        return nil
    }
}
