/// What an API key may do. A key an app ships inside its binary or its notification service
/// extension can be read out of it, so it gets the `device` scope: enough for a device to manage
/// its own registration and report receipts, never enough to publish or steer a campaign.
public enum APIKeyScope: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Bind and unbind a device, read it, read and edit its tags, post receipts.
    case device
    /// Everything: campaigns, jobs, counts, restores, and what `device` may do.
    case all

    /// Whether a key of this scope may call a route that needs `needed`.
    public func allows(_ needed: APIKeyScope) -> Bool { needed <= self }

    public static func < (lhs: APIKeyScope, rhs: APIKeyScope) -> Bool {
        lhs == .device && rhs == .all
    }
}

/// One API key as configured: its digest and its scope, written `sha256:<64 hex>` (scope `all`)
/// or `sha256:<64 hex> device` (in `apps.<id>.api-keys` and in `api-keys-file` lines alike).
public struct APIKeyGrant: Sendable, Hashable, CustomStringConvertible {
    public var digest: APIKeyDigest
    public var scope: APIKeyScope

    public init(digest: APIKeyDigest, scope: APIKeyScope = .all) {
        self.digest = digest
        self.scope = scope
    }

    /// Parses `<digest>` or `<digest> <scope>` (blanks between); nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard (1...2).contains(parts.count), let digest = APIKeyDigest(String(parts[0])) else { return nil }
        var scope = APIKeyScope.all
        if parts.count == 2 {
            guard let named = APIKeyScope(rawValue: String(parts[1])) else { return nil }
            scope = named
        }
        self.init(digest: digest, scope: scope)
    }

    /// What a line or list item must look like, for errors (which never echo the value: it may
    /// be a key pasted in place of its digest).
    static let expectedForm = "expected 'sha256:' and the 64 hex digits of the key's SHA-256 digest, optionally followed by a scope (all or device)"

    /// `sha256:<64 lowercase hex>`, followed by ` device` for a device key.
    public var description: String {
        scope == .all ? digest.description : "\(digest) \(scope.rawValue)"
    }
}
