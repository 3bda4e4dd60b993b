/// A signature algorithm a device key can use, named as in JOSE/COSE (RFC 7518, RFC 8037).
public enum SignatureAlgorithm: String, Sendable, Hashable, CaseIterable, Codable {
    /// ECDSA over P-256 with SHA-256: what a Secure Enclave key is.
    case es256 = "ES256"
    /// Ed25519 (pure EdDSA): CryptoKit software keys, BouncyCastle on Android.
    case eddsa = "EdDSA"
    /// RSASSA-PKCS1-v1_5 with SHA-256: what react-native-biometrics produces.
    case rs256 = "RS256"
}
