import Foundation
import Hummingbird
import TouchstoneCrypto
import TouchstoneStore
import TouchstoneWebAuthn

/// Passkeys (WebAuthn): `/v1/passkeys/...`.
struct PasskeyController {
    typealias Context = TouchstoneRequestContext

    let service: PasskeyService
    let store: any TouchstoneStore
    let limiter: RateLimiter
    let audit: AuditLog

    func addRoutes(to router: Router<Context>, authenticator: SessionAuthenticator) {
        let registrations = router.group("/v1/passkeys/registrations").add(middleware: authenticator)
        registrations.post("/options", use: self.registrationOptions)
        registrations.post("/verify", use: self.verifyRegistration)
        let authentications = router.group("/v1/passkeys/authentications")
            .add(middleware: AddressRateLimitMiddleware(limiter: self.limiter, group: "passkey_login"))
        authentications.post("/options", use: self.authenticationOptions)
        authentications.post("/verify", use: self.verifyAuthentication)
        let management = router.group("/v1/passkeys").add(middleware: authenticator)
        management.get(use: self.list)
        management.patch("/:id", use: self.rename)
        management.delete("/:id", use: self.delete)
        management.post("/:id/unlock", use: self.unlock)
    }

    struct PasskeyBody: Encodable { var passkey: PasskeyResource }
    /// The caller's passkeys, with what a page needs to tell the browser's passkey manager about them (the Signal
    /// API): the RP ID and the user handle the passkeys were made with.
    struct PasskeyList: Encodable {
        var passkeys: [PasskeyResource]
        var rpId: String
        var userHandle: String
    }

    struct RegistrationOptionsInput: Decodable {
        var hints: [String]?
    }

    @Sendable func registrationOptions(request: Request, context: Context) async throws -> JSONResponse<CreationOptionsJSON> {
        let caller = try context.requireIdentity()
        // The body is optional: `{}`, `{"hints": [...]}` or nothing at all.
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        var hints: [PasskeyHint]?
        if buffer.readableBytes > 0 {
            let input = try JSONDecoder().decodeOrInvalid(RegistrationOptionsInput.self, from: Data(buffer.readableBytesView))
            hints = try input.hints.map { try PasskeyHint.parse($0, field: "hints") }
        }
        return JSONResponse(.ok, try await self.service.registrationOptions(caller: caller, hints: hints))
    }

    @Sendable func verifyRegistration(request: Request, context: Context) async throws -> JSONResponse<PasskeyBody> {
        let caller = try context.requireIdentity()
        let body = try await request.decodeJSON(as: NamedRegistrationResponse.self, context: context)
        let passkey = try await self.service.verifyRegistration(caller: caller, response: body.credential, name: body.name, mediation: body.mediation)
        return JSONResponse(.created, PasskeyBody(passkey: PasskeyResource(passkey, metadata: self.service.metadata?.current)))
    }

    struct OptionsInput: Decodable {
        var email: String?
        var hints: [String]?

        enum CodingKeys: CodingKey { case email, hints }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.email = try container.decodeEmailIfPresent(.email)
            self.hints = try container.decodeIfPresent([String].self, forKey: .hints)
        }
    }

    @Sendable func authenticationOptions(request: Request, context: Context) async throws -> JSONResponse<RequestOptionsJSON> {
        // The body is optional: `{}`, `{"email": ...}` or nothing at all.
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        var email: String?
        var hints: [PasskeyHint]?
        if buffer.readableBytes > 0 {
            let input = try JSONDecoder().decodeOrInvalid(OptionsInput.self, from: Data(buffer.readableBytesView))
            email = input.email
            hints = try input.hints.map { try PasskeyHint.parse($0, field: "hints") }
        }
        if let email {
            try await self.limiter.checkAccount("account:\(email)")
        }
        return JSONResponse(.ok, try await self.service.authenticationOptions(email: email, hints: hints))
    }

    @Sendable func verifyAuthentication(request: Request, context: Context) async throws -> JSONResponse<SignedIn> {
        // The sign-in's hot path: parsed with the WebAuthn module's strict JSON parser instead of JSONDecoder.
        let body = try await request.decodeAuthenticationResponse(context: context)
        try await self.limiter.checkAccount("credential:\(body.rawId)")
        let (user, token, session) = try await self.service.verifyAuthentication(body)
        return JSONResponse(.ok, SignedIn(user: UserResource(user), session: SessionResource(token: token, record: session)))
    }

    @Sendable func list(request: Request, context: Context) async throws -> JSONResponse<PasskeyList> {
        let caller = try context.requireIdentity()
        let passkeys = try await self.store.passkeys(userId: caller.user.id)
        let blob = self.service.metadata?.current
        return JSONResponse(
            .ok,
            PasskeyList(
                passkeys: passkeys.map { PasskeyResource($0, metadata: blob) },
                rpId: self.service.relyingParty.id,
                userHandle: Base64.urlEncode(PasskeyService.userHandle(of: caller.user.id))
            )
        )
    }

    struct RenameInput: Decodable {
        var name: String?

        enum CodingKeys: CodingKey { case name }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.name = try container.decodeDisplayTextIfPresent(.name)
        }
    }

    @Sendable func rename(request: Request, context: Context) async throws -> JSONResponse<PasskeyBody> {
        let caller = try context.requireIdentity()
        let id = try context.parameters.require("id")
        let input = try await request.decodeJSON(as: RenameInput.self, context: context)
        guard try await self.store.renamePasskey(id: id, userId: caller.user.id, name: input.name),
            let passkey = try await self.store.passkey(id: id)
        else {
            throw APIError.passkeyNotFound
        }
        return JSONResponse(.ok, PasskeyBody(passkey: PasskeyResource(passkey, metadata: self.service.metadata?.current)))
    }

    @Sendable func unlock(request: Request, context: Context) async throws -> JSONResponse<PasskeyBody> {
        let caller = try context.requireIdentity()
        let passkey = try await self.service.unlock(caller: caller, passkeyId: try context.parameters.require("id"))
        return JSONResponse(.ok, PasskeyBody(passkey: PasskeyResource(passkey, metadata: self.service.metadata?.current)))
    }

    @Sendable func delete(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let caller = try context.requireIdentity()
        try self.service.sessions.requireNotCodeSession(caller, within: self.service.reauthenticationWindow)
        let id = try context.parameters.require("id")
        let userId = caller.user.id
        guard try await self.audit.commit(self.audit.event(.passkeyRemoved, userId: userId, passkeyId: id), when: { tx in
            // Not the account's last way in (the row lock serialises this with the other removals).
            guard try await tx.lockUser(id: userId) else { return false }
            guard try await tx.credentials(userId: userId).keepsACredential(withoutPasskey: id) else { throw APIError.lastCredential }
            return try await tx.deletePasskey(id: id, userId: userId)
        }) else {
            throw APIError.passkeyNotFound
        }
        return .noContent
    }
}
