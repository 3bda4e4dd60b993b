import Foundation
import Testing
import TouchstoneCrypto
import TouchstoneDPoP
import TouchstoneTesting

/// Properties of the proof parser over many generated inputs (issue #43): a changed byte never verifies as the same
/// proof, no input crashes it, and what verifies always names its key's thumbprint. The generator is seeded: a failure
/// reproduces.
struct DPoPPropertyTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let url = "https://auth.example.com/oauth2/token"

    @Test func aChangedCharacterNeverVerifiesAndNothingCrashes() throws {
        var random = SplitMix(state: 43)
        let verifier = DPoPVerifier()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ \"{}")
        for round in 0..<200 {
            let maker = DPoPProofMaker.p256()
            let proof = maker.proof(url: Self.url, accessToken: round.isMultiple(of: 2) ? "token" : nil)
            let token: String? = round.isMultiple(of: 2) ? "token" : nil
            let valid = try verifier.verify(proof, method: "POST", url: Self.url, accessToken: token, at: Self.now)
            #expect(valid.thumbprint == maker.thumbprint)
            var characters = Array(proof)
            let index = Int.random(in: 0..<characters.count, using: &random)
            var replacement = alphabet.randomElement(using: &random)!
            while replacement == characters[index] { replacement = alphabet.randomElement(using: &random)! }
            characters[index] = replacement
            let changed = String(characters)
            // A changed proof may still verify only if it means the same (base64url has no second spelling here:
            // canonical decoding refuses the spare bits), so a verified change would be a forgery.
            let verified = try? verifier.verify(changed, method: "POST", url: Self.url, accessToken: token, at: Self.now)
            #expect(verified == nil, "round \(round): a changed character at \(index) verified")
        }
    }

    @Test func randomInputsAreRefusedWithAnError() {
        var random = SplitMix(state: 9449)
        let verifier = DPoPVerifier()
        for _ in 0..<2000 {
            let length = Int.random(in: 0..<300, using: &random)
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let text = String(decoding: bytes, as: UTF8.self)
            let parts = [text, Base64.urlEncode(bytes) + "." + Base64.urlEncode(bytes) + "." + Base64.urlEncode(bytes)]
            for candidate in parts {
                #expect((try? verifier.verify(candidate, method: "POST", url: Self.url, accessToken: nil, at: Self.now)) == nil)
            }
        }
    }
}
