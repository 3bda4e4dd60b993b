import Foundation
import Hummingbird
import Crypto
import TouchstoneCrypto
import TouchstoneStore

/// Sign-in with a device key: `POST /v1/biometrics/authentications/start|finish` (no session needed).
struct BiometricAuthenticationController {
    typealias Context = TouchstoneRequestContext

    let service: BiometricService
    let limiter: RateLimiter
    let audit: AuditLog

    func addRoutes(to router: Router<Context>) {
        let group = router.group("/v1/biometrics/authentications")
            .add(middleware: AddressRateLimitMiddleware(limiter: self.limiter, group: "biometric_login"))
        group.post("/start", use: self.start)
        group.post("/finish", use: self.finish)
    }

    struct StartInput: Decodable {
        var registrationId: String?
        var publicKey: String?

        enum CodingKeys: CodingKey { case registrationId, publicKey }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.registrationId = try container.decodeStringIfPresent(.registrationId, maxLength: 64)
            self.publicKey = try container.decodeStringIfPresent(.publicKey, maxLength: 2 * DevicePublicKey.maxEncodedLength, allowLineBreaks: true)
        }
    }

    @Sendable func start(request: Request, context: Context) async throws -> JSONResponse<ChallengeResponse> {
        let input = try await request.decodeJSON(as: StartInput.self, context: context)
        if let registrationId = input.registrationId {
            try await self.limiter.checkAccount("registration:\(registrationId)", registrationId: registrationId)
        } else if let publicKey = input.publicKey {
            try await self.limiter.checkAccount("key:\(Hex.encode(SHA256.hash(data: Array(publicKey.utf8))))")
        }
        let started = try await self.service.startAuthentication(
            registrationId: input.registrationId,
            publicKey: input.publicKey
        )
        return JSONResponse(.ok, ChallengeResponse(started))
    }

    struct FinishInput: Decodable {
        var registrationId: String
        var challenge: String
        var signature: String
        var sessionDurationMinutes: Int?

        enum CodingKeys: CodingKey { case registrationId, challenge, signature, sessionDurationMinutes }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.registrationId = try container.decodeString(.registrationId, maxLength: 64)
            self.challenge = try container.decodeString(.challenge, maxLength: 256)
            self.signature = try container.decodeString(.signature, maxLength: 4096)
            self.sessionDurationMinutes = try container.decodeIntegerIfPresent(.sessionDurationMinutes)
        }
    }

    @Sendable func finish(request: Request, context: Context) async throws -> JSONResponse<SignedIn> {
        let input = try await request.decodeJSON(as: FinishInput.self, context: context)
        let signature = try decodeSignature(input.signature)
        let lifetime = try requestedSessionLifetime(minutes: input.sessionDurationMinutes)
        try await self.limiter.checkAccount("registration:\(input.registrationId)", registrationId: input.registrationId)
        let (user, token, session) = try await self.audit.failures(.biometricLogin, registrationId: input.registrationId) {
            try await self.service.finishAuthentication(
                registrationId: input.registrationId,
                challenge: input.challenge,
                signature: signature,
                sessionLifetime: lifetime
            )
        }
        return JSONResponse(.ok, SignedIn(user: UserResource(user), session: SessionResource(token: token, record: session)))
    }
}

/// A sign-in's `sessionDurationMinutes` as a lifetime (the session manager caps it at the policy's); 400
/// `invalid_request` when it is under 1.
func requestedSessionLifetime(minutes: Int?) throws -> TimeInterval? {
    guard let minutes else { return nil }
    guard minutes >= 1 else { throw APIError.invalidRequest("field 'sessionDurationMinutes' must be at least 1") }
    return TimeInterval(min(minutes, 10_000_000)) * 60
}
