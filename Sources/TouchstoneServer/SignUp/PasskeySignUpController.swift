import Foundation
import Hummingbird
import TouchstoneStore
import TouchstoneWebAuthn

/// `POST /v1/passkeys/sign-ups/options` and `/verify`: creating an account with a passkey and no password.
struct PasskeySignUpController {
    typealias Context = TouchstoneRequestContext

    let service: PasskeySignUpService
    let limiter: RateLimiter

    func addRoutes(to router: Router<Context>) {
        // Counted with password sign-up and sign-in: one budget per client address for creating accounts.
        let group = router.group("/v1/passkeys/sign-ups").add(middleware: AddressRateLimitMiddleware(limiter: self.limiter, group: "password"))
        group.post("/options", use: self.options)
        group.post("/verify", use: self.verify)
    }

    struct OptionsInput: Decodable {
        var email: String
        var displayName: String?
        var hints: [String]?

        enum CodingKeys: CodingKey { case email, displayName, hints }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.email = try container.decodeEmail(.email)
            self.displayName = try container.decodeDisplayTextIfPresent(.displayName)
            self.hints = try container.decodeIfPresent([String].self, forKey: .hints)
        }
    }

    @Sendable func options(request: Request, context: Context) async throws -> JSONResponse<CreationOptionsJSON> {
        guard self.service.enabled else { throw APIError.signUpDisabled }
        let input = try await request.decodeJSON(as: OptionsInput.self, context: context)
        let hints = try input.hints.map { try PasskeyHint.parse($0, field: "hints") }
        try await self.limiter.checkAccount("account:\(input.email)")
        return JSONResponse(.ok, try await self.service.options(email: input.email, displayName: input.displayName, hints: hints))
    }

    @Sendable func verify(request: Request, context: Context) async throws -> JSONResponse<SignedIn> {
        guard self.service.enabled else { throw APIError.signUpDisabled }
        let body = try await request.decodeJSON(as: NamedRegistrationResponse.self, context: context)
        guard body.mediation == .modal else { throw APIError.invalidRequest("a sign-up is never a conditional registration") }
        let (user, token, session) = try await self.service.verify(body.credential, name: body.name)
        return JSONResponse(.created, SignedIn(user: UserResource(user), session: SessionResource(token: token, record: session)))
    }
}
