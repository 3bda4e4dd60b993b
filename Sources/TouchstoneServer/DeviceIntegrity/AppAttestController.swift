import Foundation
import Hummingbird
import TouchstoneStore

/// App Attest: `POST /v1/app-attest/challenges`, `POST /v1/app-attest/keys` (no session: attestation happens before
/// sign-in).
struct AppAttestController {
    typealias Context = TouchstoneRequestContext

    let service: AppAttestService
    let limiter: RateLimiter

    func addRoutes(to router: Router<Context>) {
        let group = router.group("/v1/app-attest").add(middleware: AddressRateLimitMiddleware(limiter: self.limiter, group: "app_attest"))
        group.post("/challenges", use: self.challenge)
        group.post("/keys", use: self.registerKey)
    }

    struct ChallengeBody: Encodable {
        var challenge: String
        var expiresAt: String
    }

    @Sendable func challenge(request: Request, context: Context) async throws -> JSONResponse<ChallengeBody> {
        let (challenge, expiresAt) = try await self.service.issueChallenge()
        return JSONResponse(.ok, ChallengeBody(challenge: challenge, expiresAt: expiresAt.rfc3339))
    }

    struct KeyInput: Decodable {
        var keyId: String
        var attestation: String
        var challenge: String

        enum CodingKeys: CodingKey { case keyId, attestation, challenge }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.keyId = try container.decodeString(.keyId, maxLength: 128)
            self.attestation = try container.decodeString(.attestation, maxLength: 48 * 1024)
            self.challenge = try container.decodeString(.challenge, maxLength: 128)
        }
    }

    struct KeyBody: Encodable {
        var keyId: String
        var environment: String
    }

    @Sendable func registerKey(request: Request, context: Context) async throws -> JSONResponse<KeyBody> {
        let input = try await request.decodeJSON(as: KeyInput.self, context: context)
        let key = try await self.service.registerKey(keyId: input.keyId, attestation: input.attestation, challenge: input.challenge)
        return JSONResponse(.created, KeyBody(keyId: key.keyId, environment: key.environment))
    }
}

/// The optional `appAttest` object of `registrations/start`.
struct AppAttestProof: Decodable {
    var keyId: String
    var challenge: String
    var assertion: String

    enum CodingKeys: CodingKey { case keyId, challenge, assertion }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.keyId = try container.decodeString(.keyId, maxLength: 128)
        self.challenge = try container.decodeString(.challenge, maxLength: 128)
        self.assertion = try container.decodeString(.assertion, maxLength: 12 * 1024)
    }
}
