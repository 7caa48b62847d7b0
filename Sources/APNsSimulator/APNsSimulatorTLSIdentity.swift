import APNsCore
import Crypto
import Foundation
import SwiftASN1
import X509

/// The simulator's TLS identity: a certificate authority, the server certificate it issued
/// (subject alternative names `localhost` and `127.0.0.1` by default) and the server's key.
///
/// Clients trust ``certificateAuthorityPEM``; with hostname verification on, they connect to a
/// name the server certificate carries.
public struct APNsSimulatorTLSIdentity: Sendable {
    /// The CA certificate clients must trust, PEM.
    public var certificateAuthorityPEM: String
    /// The server certificate, PEM.
    public var serverCertificatePEM: String
    /// The server's private key, PEM.
    public var serverPrivateKeyPEM: String
    /// The CA's private key, PEM, when known: needed to issue client certificates.
    public var certificateAuthorityPrivateKeyPEM: String?

    public init(
        certificateAuthorityPEM: String, serverCertificatePEM: String, serverPrivateKeyPEM: String,
        certificateAuthorityPrivateKeyPEM: String? = nil
    ) {
        self.certificateAuthorityPEM = certificateAuthorityPEM
        self.serverCertificatePEM = serverCertificatePEM
        self.serverPrivateKeyPEM = serverPrivateKeyPEM
        self.certificateAuthorityPrivateKeyPEM = certificateAuthorityPrivateKeyPEM
    }

    /// Generates a fresh P-256 CA and a server certificate for the given names, valid for a year.
    public static func generate(
        dnsNames: [String] = ["localhost"], ipv4Addresses: [[UInt8]] = [[127, 0, 0, 1]]
    ) throws -> APNsSimulatorTLSIdentity {
        let now = Date()
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName {
            OrganizationName("PushFleet")
            CommonName("APNs Simulator CA")
        }
        let ca = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(caKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(365 * 86400),
            issuer: caName,
            subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))

        let serverKey = P256.Signing.PrivateKey()
        let names =
            dnsNames.map { GeneralName.dnsName($0) }
            + ipv4Addresses.map { GeneralName.ipAddress(ASN1OctetString(contentBytes: $0[...])) }
        let server = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(serverKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(365 * 86400),
            issuer: caName,
            subject: try DistinguishedName { CommonName(dnsNames.first ?? "localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))

        return APNsSimulatorTLSIdentity(
            certificateAuthorityPEM: try ca.serializeAsPEM().pemString,
            serverCertificatePEM: try server.serializeAsPEM().pemString,
            serverPrivateKeyPEM: serverKey.pemRepresentation,
            certificateAuthorityPrivateKeyPEM: caKey.pemRepresentation)
    }

    /// Issues a client certificate for certificate-based provider authentication.
    ///
    /// The simulator reads the environment from the certificate's organizational unit
    /// (`sandbox` or `production`; anything else is a BadCertificate) and the allowed topic from
    /// its common name. It is valid from an hour ago for `validFor`.
    public func issueClientCertificate(
        topic: String, environmentName: String, validFor: Duration = .seconds(365 * 86400)
    ) throws -> (certificatePEM: String, privateKeyPEM: String) {
        guard let caKeyPEM = certificateAuthorityPrivateKeyPEM else {
            throw APNsSimulatorError.noCertificateAuthorityKey
        }
        let caKey = try P256.Signing.PrivateKey(pemRepresentation: caKeyPEM)
        let ca = try Certificate(pemEncoded: certificateAuthorityPEM)
        let key = P256.Signing.PrivateKey()
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(TimeInterval(validFor.components.seconds)),
            issuer: ca.subject,
            subject: try DistinguishedName {
                OrganizationalUnitName(environmentName)
                CommonName(topic)
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.clientAuth])
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    /// Writes the CA certificate where clients can read it.
    public func writeCertificateAuthority(to path: String) throws {
        try Data(certificateAuthorityPEM.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
