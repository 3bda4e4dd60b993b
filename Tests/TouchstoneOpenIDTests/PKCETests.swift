import Testing
import TouchstoneOpenID

/// PKCE, S256 only (issue #31, §3 and §4).
struct PKCETests {
    /// RFC 7636, Appendix B: the example verifier and its S256 challenge.
    static let rfcVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let rfcChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    @Test func theRFCExampleVerifies() {
        #expect(PKCE.challenge(of: Self.rfcVerifier) == Self.rfcChallenge)
        #expect(PKCE.isValidChallenge(Self.rfcChallenge))
        #expect(PKCE.verify(verifier: Self.rfcVerifier, challenge: Self.rfcChallenge))
    }

    @Test func aWrongOrMalformedVerifierFails() {
        var other = Array(Self.rfcVerifier)
        other[0] = "e"
        #expect(!PKCE.verify(verifier: String(other), challenge: Self.rfcChallenge))
        // `plain`: the verifier itself as the challenge never passes.
        #expect(!PKCE.verify(verifier: Self.rfcVerifier, challenge: Self.rfcVerifier))
        for verifier in [
            "", String(repeating: "a", count: 42), String(repeating: "a", count: 129), String(repeating: "a", count: 42) + "+",
            String(repeating: "a", count: 42) + "/", String(repeating: "a", count: 42) + "=", String(repeating: "é", count: 43),
        ] {
            #expect(!PKCE.isValidVerifier(verifier), "\(verifier)")
            #expect(!PKCE.verify(verifier: verifier, challenge: PKCE.challenge(of: verifier)), "\(verifier)")
        }
        #expect(PKCE.isValidVerifier(String(repeating: "a", count: 43)))
        #expect(PKCE.isValidVerifier(String(repeating: "-._~", count: 32)))
    }

    @Test func aChallengeIsFortyThreeBase64URLCharacters() {
        for challenge in ["", Self.rfcChallenge + "=", String(Self.rfcChallenge.dropLast()), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM", String(repeating: "A", count: 44)] {
            #expect(!PKCE.isValidChallenge(challenge), "\(challenge)")
        }
    }
}
