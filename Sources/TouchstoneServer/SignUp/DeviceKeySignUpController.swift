import Foundation
import Hummingbird
import TouchstoneCrypto
import TouchstoneStore

/// `POST /v1/biometrics/sign-ups/start` and `/finish`: creating an account from the phone with a device key and no
/// password; `POST /v1/android-key-attestation/sign-up-challenges`: the attestation challenge for such a key, which
/// has no account (and so no session) yet.
struct DeviceKeySignUpController {
    typealias Context = TouchstoneRequestContext

    let service: DeviceKeySignUpService
    let limiter: RateLimiter

    func addRoutes(to router: Router<Context>) {
        // Counted with the other sign-ups and password sign-ins: one budget per client address for creating accounts.
        let limited = router.group().add(middleware: AddressRateLimitMiddleware(limiter: self.limiter, group: "password"))
        limited.post("/v1/biometrics/sign-ups/start", use: self.start)
        limited.post("/v1/biometrics/sign-ups/finish", use: self.finish)
        limited.post("/v1/android-key-attestation/sign-up-challenges", use: self.attestationChallenge)
    }

    struct StartInput: Decodable {
        var input: DeviceKeySignUpService.StartInput

        enum CodingKeys: CodingKey { case email, displayName, publicKey, algorithm, deviceId, deviceName, appAttest, keyAttestation }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.input = DeviceKeySignUpService.StartInput(
                email: try container.decodeEmail(.email),
                displayName: try container.decodeDisplayTextIfPresent(.displayName),
                publicKey: try container.decodeString(.publicKey, maxLength: 2 * DevicePublicKey.maxEncodedLength, allowLineBreaks: true),
                algorithm: try container.decodeString(.algorithm, maxLength: 16),
                deviceId: try container.decodeString(.deviceId, maxLength: 200),
                deviceName: try container.decodeDisplayTextIfPresent(.deviceName),
                appAttest: try container.decodeIfPresent(AppAttestProof.self, forKey: .appAttest),
                keyAttestation: try container.decodeIfPresent([String].self, forKey: .keyAttestation)
            )
        }
    }

    struct StartedBody: Encodable {
        var signUpId: String
        var challenge: String
        var expiresAt: String
    }

    @Sendable func start(request: Request, context: Context) async throws -> JSONResponse<StartedBody> {
        guard self.service.enabled else { throw APIError.signUpDisabled }
        let body = try await request.decodeJSON(as: StartInput.self, context: context)
        try await self.limiter.checkAccount("account:\(body.input.email)")
        let started = try await self.service.start(body.input)
        return JSONResponse(.ok, StartedBody(signUpId: started.signUpId, challenge: started.challenge, expiresAt: started.expiresAt.rfc3339))
    }

    struct FinishInput: Decodable {
        var signUpId: String
        var signature: String
        /// The phone's DPoP proof key (issue #43), optional: the new session is then bound to it.
        var proofKey: ProofKeyInput.Fields

        enum CodingKeys: CodingKey { case signUpId, signature }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.signUpId = try container.decodeString(.signUpId, maxLength: 64)
            self.signature = try container.decodeString(.signature, maxLength: 4096)
            self.proofKey = try ProofKeyInput.Fields(from: decoder)
        }
    }

    /// The account, its session, and the registration with its device credential (shown once), as enrolment answers.
    struct SignedUpBody: Encodable {
        var user: UserResource
        var session: SessionResource
        var registration: RegistrationResource
        var deviceCredential: String
    }

    @Sendable func finish(request: Request, context: Context) async throws -> JSONResponse<SignedUpBody> {
        guard self.service.enabled else { throw APIError.signUpDisabled }
        let input = try await request.decodeJSON(as: FinishInput.self, context: context)
        let signature = try decodeSignature(input.signature)
        var proofKey = try ProofKeyInput.parse(input.proofKey)
        try await proofKey?.verifyAttestation(with: self.service.integrity.androidKeyAttestation)
        let done = try await self.service.finish(signUpId: input.signUpId, signature: signature, proofKey: proofKey)
        return JSONResponse(
            .created,
            SignedUpBody(
                user: UserResource(done.user),
                session: SessionResource(token: done.token, record: done.session),
                registration: RegistrationResource(done.registration),
                deviceCredential: done.deviceCredential
            ),
            headers: [.cacheControl: "no-store"]
        )
    }

    struct ChallengeBody: Encodable {
        var challenge: String
        var expiresAt: String
    }

    @Sendable func attestationChallenge(request: Request, context: Context) async throws -> JSONResponse<ChallengeBody> {
        guard self.service.enabled else { throw APIError.signUpDisabled }
        let issued = try await self.service.integrity.androidKeyAttestation.issueChallenge(userId: nil)
        return JSONResponse(.ok, ChallengeBody(challenge: issued.challenge, expiresAt: issued.expiresAt.rfc3339))
    }
}
