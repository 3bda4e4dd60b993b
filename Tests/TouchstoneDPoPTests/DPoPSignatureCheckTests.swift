import Foundation
import Synchronization
import Testing
import TouchstoneDPoP
import TouchstoneTesting

/// `DPoPVerifier.signatureCheck`: the hook the server times a sample of signature checks with.
struct DPoPSignatureCheckTests {
    /// Counts the checks it runs and what they returned.
    final class Recorder: Sendable {
        let verdicts = Mutex<[Bool]>([])

        func run(_ check: () -> Bool) -> Bool {
            let valid = check()
            self.verdicts.withLock { $0.append(valid) }
            return valid
        }
    }

    @Test func eachProofsSignatureIsCheckedOnceThroughTheHookAndItsVerdictStands() throws {
        let recorder = Recorder()
        var verifier = DPoPVerifier()
        verifier.signatureCheck = { recorder.run($0) }
        let maker = DPoPProofMaker.p256()
        let url = "https://auth.example.com/v1/session"
        let now = Date(timeIntervalSince1970: 1_800_000_000)  // the maker's iat

        let verified = try verifier.verify(maker.proof(method: "GET", url: url, accessToken: "t"), method: "GET", url: url,
            accessToken: "t", at: now)
        #expect(verified.thumbprint == maker.thumbprint)
        #expect(recorder.verdicts.withLock { $0 } == [true])

        // A signature that does not verify: the hook ran the check, which said no, and the proof is refused.
        let forged = maker.proof(method: "GET", url: url, accessToken: "t", signature: { s in var s = s; s[3] ^= 1; return s })
        #expect(throws: DPoPError.self) { try verifier.verify(forged, method: "GET", url: url, accessToken: "t", at: now) }
        #expect(recorder.verdicts.withLock { $0 } == [true, false])

        // A proof refused before its signature (malformed) never reaches the hook.
        #expect(throws: DPoPError.self) { try verifier.verify("a.b", method: "GET", url: url, accessToken: "t", at: now) }
        #expect(recorder.verdicts.withLock { $0 }.count == 2)
    }
}
