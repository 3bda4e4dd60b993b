/// `none` (WebAuthn Level 3 §8.7): no statement; nothing to verify.
enum NoneAttestation: AttestationFormatVerifier {
    static let identifier = "none"

    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationOutcome {
        guard input.statement.count == 0 else { throw WebAuthnError(.invalidAttestation, "a none statement must be empty") }
        return AttestationOutcome(type: .none, trustPath: [])
    }
}
