import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// The phone's proof key (issue #43): registered with the device key, it binds the sessions of the registration's
/// sign-ins, which then work only as `Authorization: DPoP` with proofs from it.
struct BoundSessionTests {
    static let origin = "https://auth.example.com"

    static func configuration() -> TouchstoneConfiguration {
        TestServer.configuration { $0.tokens.issuer = Self.origin }
    }

    /// `proofKey` and `proofKeySignature` for a message signed by both keys.
    static func proofKeyFields(_ proofKey: DPoPProofMaker, challenge: String) -> [String: any Sendable] {
        ["proofKey": proofKey.jwk, "proofKeySignature": Base64.urlEncode(proofKey.sign(Array("\(challenge).\(proofKey.thumbprint)".utf8)))]
    }

    /// Enrols `device` with `proofKey` and returns the registration id.
    static func enrol(_ flow: Flow, _ token: String, _ device: TestDeviceKey, _ proofKey: DPoPProofMaker) async throws -> JSONTestResponse {
        let start = try await flow.startRegistration(token, device)
        let challenge = try #require(start.value("challenge"))
        var body: [String: any Sendable] = ["registrationId": try #require(start.value("registrationId")),
            "signature": device.signed("\(challenge).\(proofKey.thumbprint)")]
        body.merge(Self.proofKeyFields(proofKey, challenge: challenge)) { $1 }
        return try await flow.client.request(.post, "/v1/biometrics/registrations/finish", token: token, json: body)
    }

    /// A call with a bound session: `DPoP <token>` and a proof with `ath`.
    static func call(_ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ path: String, session: String,
        proof: DPoPProofMaker?, scheme: String = "DPoP") async throws -> JSONTestResponse
    {
        var headers: HTTPFields = [.authorization: "\(scheme) \(session)"]
        if let proof { headers[.init("DPoP")!] = proof.proof(method: method.rawValue, url: Self.origin + path, accessToken: session) }
        return try await client.request(method, path, headers: headers)
    }

    @Test func aSignInOfARegistrationWithAProofKeyOpensASessionBoundToIt() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256), phone = DPoPProofMaker.p256(), thief = DPoPProofMaker.p256()
            let enrolled = try await Self.enrol(flow, account.token, device, phone)
            try #require(enrolled.status == .created, "\(String(decoding: enrolled.body, as: UTF8.self))")
            #expect(enrolled.value("registration", "proofKeyThumbprint") == phone.thumbprint)
            let registrationId = try #require(enrolled.value("registration", "id"))
            // The password session that enrolled stays a bearer session.
            #expect(try await client.request(.get, "/v1/session", token: account.token).status == .ok)

            let login = try await flow.login(registrationId, device)
            let session = try #require(login.value("session", "token"))
            let ok = try await Self.call(client, .get, "/v1/session", session: session, proof: phone)
            #expect(ok.status == .ok)
            let cases: [(String, JSONTestResponse)] = [
                ("as Bearer", try await Self.call(client, .get, "/v1/session", session: session, proof: nil, scheme: "Bearer")),
                ("without a proof", try await Self.call(client, .get, "/v1/session", session: session, proof: nil)),
                ("with another key's proof", try await Self.call(client, .get, "/v1/session", session: session, proof: thief)),
            ]
            for (name, response) in cases {
                #expect(response.status == .unauthorized, "\(name)")
                #expect(response.errorCode == "invalid_dpop_proof", "\(name): \(String(decoding: response.body, as: UTF8.self))")
                #expect(response.headers[.wwwAuthenticate]?.hasPrefix("DPoP algs=") == true, "\(name)")
            }
            // A proof replayed, or made for another path, is refused.
            let proof = phone.proof(method: "GET", url: Self.origin + "/v1/session", accessToken: session)
            let headers: HTTPFields = [.authorization: "DPoP \(session)", .init("DPoP")!: proof]
            #expect(try await client.request(.get, "/v1/session", headers: headers).status == .ok)
            #expect(try await client.request(.get, "/v1/session", headers: headers).errorCode == "invalid_dpop_proof")
            let elsewhere: HTTPFields = [.authorization: "DPoP \(session)",
                .init("DPoP")!: phone.proof(method: "GET", url: Self.origin + "/v1/passkeys", accessToken: session)]
            #expect(try await client.request(.get, "/v1/session", headers: elsewhere).errorCode == "invalid_dpop_proof")
            // A bearer session sent as DPoP is refused too.
            let dressed = try await Self.call(client, .get, "/v1/session", session: account.token, proof: phone)
            #expect(dressed.status == .unauthorized && dressed.errorCode == "invalid_dpop_proof")

            // Access tokens minted from the session are bound to the same key.
            let minted = try await Self.call(client, .post, "/v1/session/token", session: session, proof: phone)
            #expect(minted.status == .ok && minted.value("tokenType") == "DPoP")
            let token = try #require(minted.value("accessToken") as String?)
            #expect((jwtPayload(token)["cnf"] as? [String: String])?["jkt"] == phone.thumbprint)

            // Revoking the registration ends the session (and its key with it).
            #expect(try await client.request(.delete, "/v1/biometrics/registrations/\(registrationId)", token: account.token).status == .noContent)
            let ended = try await Self.call(client, .get, "/v1/session", session: session, proof: phone)
            #expect(ended.status == .unauthorized && ended.errorCode == "unauthenticated")
        }
    }

    @Test func aProofKeyIsNeverOnTwoRegistrationsAndIsCheckedAtEnrolment() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let flow = Flow(client: client)
            let first = try await flow.signUp(), second = try await flow.signUp()
            let phone = DPoPProofMaker.p256()
            #expect(try await Self.enrol(flow, first.token, TestDeviceKey(.es256), phone).status == .created)
            let taken = try await Self.enrol(flow, second.token, TestDeviceKey(.es256), phone)
            #expect(taken.status == .conflict && taken.errorCode == "proof_key_in_use")

            // The proof key must sign too, the device key must sign the thumbprint with the challenge, and the JWK must
            // be a public key.
            let device = TestDeviceKey(.es256), other = DPoPProofMaker.p256()
            let start = try await flow.startRegistration(second.token, device)
            let challenge = try #require(start.value("challenge")), id = try #require(start.value("registrationId"))
            var forged = Self.proofKeyFields(other, challenge: challenge)
            forged["proofKeySignature"] = Base64.urlEncode(DPoPProofMaker.p256().sign(Array("\(challenge).\(other.thumbprint)".utf8)))
            let notHeld = try await client.request(.post, "/v1/biometrics/registrations/finish", token: second.token,
                json: ["registrationId": id, "signature": device.signed("\(challenge).\(other.thumbprint)")].merging(forged) { $1 })
            #expect(notHeld.status == .badRequest && notHeld.errorCode == "invalid_proof_key")
            let start2 = try await flow.startRegistration(second.token, device)
            let challenge2 = try #require(start2.value("challenge")), id2 = try #require(start2.value("registrationId"))
            let unvouched = try await client.request(.post, "/v1/biometrics/registrations/finish", token: second.token,
                json: ["registrationId": id2, "signature": device.signed(challenge2)].merging(Self.proofKeyFields(other, challenge: challenge2)) { $1 })
            #expect(unvouched.status == .unauthorized && unvouched.errorCode == "invalid_signature")
            var privateJWK = other.jwk
            privateJWK["d"] = "AAAA"
            let start3 = try await flow.startRegistration(second.token, device)
            let challenge3 = try #require(start3.value("challenge"))
            let leaked = try await client.request(.post, "/v1/biometrics/registrations/finish", token: second.token,
                json: ["registrationId": try #require(start3.value("registrationId")), "signature": device.signed(challenge3),
                    "proofKey": privateJWK, "proofKeySignature": "AAAA"])
            #expect(leaked.status == .badRequest && leaked.errorCode == "invalid_proof_key")
        }
    }

    @Test func aRegistrationEnrolledBeforeGetsAProofKeyThroughASignedCall() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256), phone = DPoPProofMaker.p256()
            let registrationId = try await flow.enroll(account.token, device)
            let session = try #require(try await flow.login(registrationId, device).value("session", "token"))
            #expect(try await client.request(.get, "/v1/session", token: session).status == .ok)  // a bearer session so far

            let path = "/v1/biometrics/registrations/\(registrationId)/proof-key"
            let challenge = try await flow.challenge(registrationId)
            let wrong = try await client.request(.post, path, token: session,
                json: ["challenge": challenge, "signature": device.signed(challenge)].merging(Self.proofKeyFields(phone, challenge: challenge)) { $1 })
            #expect(wrong.status == .unauthorized && wrong.errorCode == "invalid_signature")
            let fresh = try await flow.challenge(registrationId)
            let added = try await client.request(.post, path, token: session,
                json: ["challenge": fresh, "signature": device.signed("\(fresh).\(phone.thumbprint)")].merging(Self.proofKeyFields(phone, challenge: fresh)) { $1 })
            try #require(added.status == .ok, "\(String(decoding: added.body, as: UTF8.self))")
            #expect(added.value("registration", "proofKeyThumbprint") == phone.thumbprint)
            // From now on the registration's sessions are bound, the open one included.
            #expect(try await client.request(.get, "/v1/session", token: session).errorCode == "invalid_dpop_proof")
            #expect(try await Self.call(client, .get, "/v1/session", session: session, proof: phone).status == .ok)
            // The challenge was used once; a second key is refused.
            let again = try await Self.call(client, .post, path, session: session, proof: phone)
            #expect(again.status == .badRequest)
            let other = DPoPProofMaker.p256()
            let third = try await flow.challenge(registrationId)
            var headers: HTTPFields = [.authorization: "DPoP \(session)"]
            headers[.init("DPoP")!] = phone.proof(url: Self.origin + path, accessToken: session)
            let exists = try await client.request(.post, path, json: ["challenge": third, "signature": device.signed("\(third).\(other.thumbprint)")]
                .merging(Self.proofKeyFields(other, challenge: third)) { $1 }, headers: headers)
            #expect(exists.status == .conflict && exists.errorCode == "proof_key_exists")
        }
    }

    @Test func aDeviceKeySignUpWithAProofKeyOpensABoundSession() async throws {
        try await TestServer.run(configuration: Self.configuration()) { client in
            let device = TestDeviceKey(.es256), phone = DPoPProofMaker.p256()
            let start = try await client.request(.post, "/v1/biometrics/sign-ups/start", json: [
                "email": "bound-\(UUID().uuidString.prefix(6))@example.com", "publicKey": device.publicKey(), "algorithm": "ES256",
                "deviceId": UUID().uuidString,
            ])
            let challenge = try #require(start.value("challenge"), "\(String(decoding: start.body, as: UTF8.self))")
            let finish = try await client.request(.post, "/v1/biometrics/sign-ups/finish",
                json: ["signUpId": try #require(start.value("signUpId")), "signature": device.signed("\(challenge).\(phone.thumbprint)")]
                    .merging(Self.proofKeyFields(phone, challenge: challenge)) { $1 })
            try #require(finish.status == .created, "\(String(decoding: finish.body, as: UTF8.self))")
            let session = try #require(finish.value("session", "token"))
            #expect(try await client.request(.get, "/v1/session", token: session).errorCode == "invalid_dpop_proof")
            #expect(try await Self.call(client, .get, "/v1/session", session: session, proof: phone).status == .ok)
        }
    }
}
