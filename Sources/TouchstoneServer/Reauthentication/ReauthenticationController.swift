import Foundation
import Hummingbird
import TouchstoneStore
import TouchstoneWebAuthn

/// `POST /v1/session/reauthenticate` with a password, a passkey assertion or a device-key signature, and the two
/// routes that issue their challenges (`/passkey-options`, `/device-key-challenge`). All need the session.
struct ReauthenticationController {
    typealias Context = TouchstoneRequestContext

    let service: ReauthenticationService
    let limiter: RateLimiter

    func addRoutes(to router: Router<Context>, authenticator: SessionAuthenticator) {
        let group = router.group("/v1/session/reauthenticate").add(middleware: authenticator)
        group.post(use: self.reauthenticate)
        group.post("/passkey-options", use: self.passkeyOptions)
        group.post("/device-key-challenge", use: self.deviceKeyChallenge)
    }

    /// The body: exactly one of `password`, `passkey` (an `AuthenticationResponseJSON`) and `deviceKey`
    /// (`{registrationId, challenge, signature}`).
    struct Input: Decodable {
        var proof: ReauthenticationService.Proof

        enum CodingKeys: CodingKey { case password, passkey, deviceKey }
        enum DeviceKeyKeys: CodingKey { case registrationId, challenge, signature }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let present = [CodingKeys.password, .passkey, .deviceKey].filter { container.contains($0) }
            guard present.count == 1, let key = present.first else {
                throw APIError.invalidRequest("provide exactly one of 'password', 'passkey' and 'deviceKey'")
            }
            switch key {
            case .password:
                self.proof = .password(try container.decodePassword(.password, isNew: false))
            case .passkey:
                self.proof = .passkey(try container.decode(AuthenticationResponseJSON.self, forKey: .passkey))
            case .deviceKey:
                let nested = try container.nestedContainer(keyedBy: DeviceKeyKeys.self, forKey: .deviceKey)
                self.proof = .deviceKey(
                    registrationId: try nested.decodeString(.registrationId, maxLength: 64),
                    challenge: try nested.decodeString(.challenge, maxLength: 256),
                    signature: try decodeSignature(try nested.decodeString(.signature, maxLength: 4096))
                )
            }
        }
    }

    struct Reauthenticated: Encodable { var session: SessionResource }

    @Sendable func reauthenticate(request: Request, context: Context) async throws -> JSONResponse<Reauthenticated> {
        let caller = try context.requireIdentity()
        let input = try await request.decodeJSON(as: Input.self, context: context)
        switch input.proof {
        case .password: try await self.limiter.checkAddress("password", client: context.client)
        case .passkey(let response): try await self.limiter.checkAccount("credential:\(response.rawId)")
        case .deviceKey(let registrationId, _, _): try await self.limiter.checkAccount("registration:\(registrationId)", registrationId: registrationId)
        }
        let session = try await self.service.reauthenticate(caller, with: input.proof, client: context.client)
        return JSONResponse(.ok, Reauthenticated(session: SessionResource(token: caller.token, record: session)))
    }

    @Sendable func passkeyOptions(request: Request, context: Context) async throws -> JSONResponse<RequestOptionsJSON> {
        let caller = try context.requireIdentity()
        return JSONResponse(.ok, try await self.service.passkeyOptions(caller))
    }

    struct ChallengeInput: Decodable {
        var registrationId: String

        enum CodingKeys: CodingKey { case registrationId }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.registrationId = try container.decodeString(.registrationId, maxLength: 64)
        }
    }

    @Sendable func deviceKeyChallenge(request: Request, context: Context) async throws -> JSONResponse<ChallengeResponse> {
        let caller = try context.requireIdentity()
        let input = try await request.decodeJSON(as: ChallengeInput.self, context: context)
        let started = try await self.service.deviceKeyChallenge(caller, registrationId: input.registrationId)
        return JSONResponse(.ok, ChallengeResponse(started))
    }
}
