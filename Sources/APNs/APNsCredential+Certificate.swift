import Foundation
import NIOSSL

extension APNsCredential {
    /// The client certificate chain (leaf first) and private key of a certificate credential;
    /// `nil` for a signing key.
    ///
    /// - Throws: ``APNsError/Code/invalidCredential`` when the PEM or PKCS#12 bundle cannot be
    ///   read (its error names no key material).
    func tlsIdentity() throws(APNsError) -> (chain: [NIOSSLCertificate], key: NIOSSLPrivateKey)? {
        do {
            switch material {
            case .token:
                return nil
            case .certificate(let chainPEM, let keyPEM):
                return (try NIOSSLCertificate.fromPEMBytes(Array(chainPEM.utf8)), try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem))
            case .pkcs12(let bytes, let passphrase):
                let bundle = try NIOSSLPKCS12Bundle(buffer: bytes, passphrase: passphrase.map { Array($0.utf8) })
                return (bundle.certificateChain, bundle.privateKey)
            }
        } catch {
            throw APNsError(.invalidCredential, underlying: error)
        }
    }

    /// When the client certificate stops being valid (its leaf's notAfter); `nil` for a
    /// signing key, whose provider tokens do not expire that way.
    ///
    /// - Throws: ``APNsError/Code/invalidCredential`` when the certificate cannot be read.
    public func certificateNotValidAfter() throws(APNsError) -> Date? {
        guard let identity = try tlsIdentity() else { return nil }
        guard let leaf = identity.chain.first else {
            throw APNsError(.invalidCredential, underlying: APNsCredentialError.noCertificate)
        }
        return Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
    }
}

/// A certificate credential without a certificate.
enum APNsCredentialError: Error, CustomStringConvertible {
    case noCertificate

    var description: String { "the credential holds no certificate" }
}
