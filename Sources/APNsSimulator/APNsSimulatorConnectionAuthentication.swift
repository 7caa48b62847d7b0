import APNsCore

/// What one connection has established about its provider so far. Owned by the connection's
/// event loop; mutated only by ``APNsSimulatorRequestValidator``.
struct APNsSimulatorConnectionAuthentication: Sendable {
    /// The client certificate presented in the TLS handshake, if any.
    struct ClientCertificate: Sendable {
        /// `sandbox` or `production` from the organizational unit; anything else is bad.
        let environmentName: String?
        /// The topic (bundle id) the certificate is for.
        let topic: String?
    }

    var clientCertificate: ClientCertificate?
    /// The key id of the first token accepted on this connection.
    var keyID: String?
    /// The token currently in use, as sent (without "bearer ").
    var currentToken: String?
    /// Its `iat` claim.
    var currentTokenIssuedAt: Int64 = 0
    /// When (server seconds since 1970) the current token was first accepted.
    var currentTokenAcceptedAt: Int64 = 0
    /// Whether the request validated last carried a token (or came on a certificate connection)
    /// the simulator accepted, whatever it then said of the device: what lifts Apple's limit of
    /// one stream ("until you post a request with a valid authentication token").
    var lastRequestAuthenticated = false
}
