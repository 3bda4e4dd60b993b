public import X509
import SwiftASN1

extension RelyingParty {
    /// Parses attestation roots from PEM text holding one or more `CERTIFICATE` blocks.
    ///
    /// - Returns: `nil` when the text holds no certificate or a block that is not one.
    public static func trustAnchors(pem text: String) -> [Certificate]? {
        guard let documents = try? PEMDocument.parseMultiple(pemString: text), !documents.isEmpty,
            let certificates = try? documents.map({ try Certificate(pemDocument: $0) })
        else {
            return nil
        }
        return certificates
    }
}

extension VerifiedRegistration {
    /// The AAGUID as a lowercase UUID string (`00000000-0000-0000-0000-000000000000` for authenticators that hide it).
    public var aaguidString: String { AAGUID.string(self.aaguid) }
}

/// Authenticator model identifiers.
enum AAGUID {
    /// 16 bytes as a lowercase UUID string (other lengths as plain hex).
    static func string(_ bytes: [UInt8]) -> String {
        let hex = Array(bytes.map { byte in byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }.joined())
        guard bytes.count == 16 else { return String(hex) }
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }
}
