import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// A phone's proof key (issue #43) where Android key attestation vouched for the device key: the proof key needs its
/// own chain, from the same Keystore, attested with the enrolment's challenge (no biometric: it signs without the user).
struct ProofKeyAttestationTests {
    typealias Android = AndroidKeyAttestationTests

    static func proofKeyChain(_ keystore: TestAndroidKeystore, _ proofKey: DPoPProofMaker, challenge: [UInt8]) throws -> [String] {
        guard case .p256(let key) = proofKey.key else { throw CancellationError() }
        var attested = TestAndroidKeystore.Key(challenge: challenge)
        attested.noAuthRequired = true
        attested.userAuthType = nil
        return try keystore.encodedChain(for: key.publicKey, key: attested)
    }

    @Test func anAttestedDeviceKeyNeedsAnAttestedProofKeyMadeWithTheEnrolmentsChallenge() async throws {
        let keystore = try TestAndroidKeystore()
        try await TestServer.run(configuration: Android.configuration(keystore: keystore, required: true)) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let phone = DPoPProofMaker.p256()
            func attempt(_ proofKeyAttestation: ((String) throws -> [String])?) async throws -> JSONTestResponse {
                let deviceKey = TestDeviceKey(.es256)
                let chain = try Android.chain(keystore, for: deviceKey, challenge: try await Android.challenge(client, token: account.token))
                let start = try await Android.start(client, token: account.token, deviceKey: deviceKey, chain: chain)
                let challenge = try #require(start.value("challenge"), "\(String(decoding: start.body, as: UTF8.self))")
                var body: [String: any Sendable] = ["registrationId": try #require(start.value("registrationId")),
                    "signature": deviceKey.signed("\(challenge).\(phone.thumbprint)")]
                body.merge(BoundSessionTests.proofKeyFields(phone, challenge: challenge)) { $1 }
                if let proofKeyAttestation { body["proofKeyAttestation"] = try proofKeyAttestation(challenge) }
                return try await client.request(.post, "/v1/biometrics/registrations/finish", token: account.token, json: body)
            }
            let unattested = try await attempt(nil)
            #expect(unattested.status == .badRequest && unattested.errorCode == "invalid_key_attestation")
            let otherChallenge = try await attempt { _ in try Self.proofKeyChain(keystore, phone, challenge: Array("another".utf8)) }
            #expect(otherChallenge.status == .badRequest && otherChallenge.errorCode == "invalid_key_attestation")
            let otherKey = try await attempt { challenge in try Self.proofKeyChain(keystore, DPoPProofMaker.p256(), challenge: Array(challenge.utf8)) }
            #expect(otherKey.status == .badRequest && otherKey.errorCode == "invalid_key_attestation")
            let attested = try await attempt { challenge in try Self.proofKeyChain(keystore, phone, challenge: Array(challenge.utf8)) }
            #expect(attested.status == .created, "\(String(decoding: attested.body, as: UTF8.self))")
            #expect(attested.value("registration", "proofKeyThumbprint") == phone.thumbprint)
        }
    }
}
