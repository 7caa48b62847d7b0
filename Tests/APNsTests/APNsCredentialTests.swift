import APNs
import Testing

/// Credentials never print their key material.
@Suite("Credentials")
struct APNsCredentialTests {
    @Test("description, debug description and dump hide the key")
    func redaction() {
        let secret = "-----BEGIN PRIVATE KEY-----\nSECRETMATERIAL\n-----END PRIVATE KEY-----"
        let credential = APNsCredential.token(teamID: "TEAM", keyID: "KEY", privateKeyPEM: secret)
        var dumped = ""
        dump(credential, to: &dumped)
        for text in ["\(credential)", String(reflecting: credential), "\(credential.material)", dumped] {
            #expect(!text.contains("SECRETMATERIAL"), "\(text)")
        }
        #expect(credential.id == "token/TEAM/KEY")
    }
}
