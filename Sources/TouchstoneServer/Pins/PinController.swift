import Foundation
import Hummingbird

/// Sign-in with an app PIN: `POST /v1/pin/authentications` (no session needed).
struct PinController {
    typealias Context = TouchstoneRequestContext

    let pins: PinService
    let limiter: RateLimiter

    func addRoutes(to router: Router<Context>) {
        router.group("/v1/pin").add(middleware: AddressRateLimitMiddleware(limiter: self.limiter, group: "pin_login"))
            .post("/authentications", use: self.authenticate)
    }

    struct Input: Decodable {
        var registrationId: String
        var pin: String
        var sessionDurationMinutes: Int?

        enum CodingKeys: CodingKey { case registrationId, pin, sessionDurationMinutes }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.registrationId = try container.decodeString(.registrationId, maxLength: 64)
            self.pin = try container.decodeString(.pin, maxLength: 8) { (text) throws(FieldError) in try InputRules.pin(text) }
            self.sessionDurationMinutes = try container.decodeIntegerIfPresent(.sessionDurationMinutes)
        }
    }

    @Sendable func authenticate(request: Request, context: Context) async throws -> JSONResponse<SignedIn> {
        let input = try await request.decodeJSON(as: Input.self, context: context)
        let lifetime = try requestedSessionLifetime(minutes: input.sessionDurationMinutes)
        try await self.limiter.checkFailedCredentials(client: context.client)
        try await self.limiter.checkAccount("registration:\(input.registrationId)", registrationId: input.registrationId)
        let (user, token, session) = try await self.pins.audit.failures(.pinLogin, registrationId: input.registrationId) {
            do {
                return try await self.pins.authenticate(
                    registrationId: input.registrationId,
                    pin: input.pin,
                    sessionLifetime: lifetime
                )
            } catch let error as APIError where error == .invalidPin {
                try await self.limiter.credentialCheckFailed(client: context.client, registrationId: input.registrationId)
                throw error
            }
        }
        return JSONResponse(.ok, SignedIn(user: UserResource(user), session: SessionResource(token: token, record: session)))
    }
}
