import Foundation
import Hummingbird
import TouchstoneConfirmation
import TouchstoneStore
import TouchstoneWebAuthn

/// Transaction confirmations: `/v1/confirmations...`.
struct ConfirmationController {
    typealias Context = TouchstoneRequestContext

    let service: ConfirmationService
    let authenticator: SessionAuthenticator
    let store: any TouchstoneStore
    let limiter: RateLimiter
    let passkeyTimeoutMilliseconds: Int

    func addRoutes(to router: Router<Context>) {
        let group = router.group("/v1/confirmations")
        group.post(use: self.create)
        group.get("/:id", use: self.get)
        group.post("/:id/decline", use: self.decline)
        group.get("/:id/evidence", use: self.evidence)
        group.post("/:id/passkey-options", use: self.passkeyOptions)
        // The two approvals need no session (the signature is the proof) and are rate limited like sign-ins.
        let approvals = group.add(middleware: AddressRateLimitMiddleware(limiter: self.limiter, group: "confirmation_approval"))
        approvals.post("/:id/approve", use: self.approve)
        approvals.post("/:id/passkey-verify", use: self.passkeyVerify)
    }

    // MARK: Who is calling

    /// The caller of a route open to the confirmation's user and to service callers: a session, or an admin key
    /// (`tsa_...`). 401 without a usable bearer token.
    func caller(_ request: Request) async throws -> ConfirmationCaller {
        let token = DPoPGate.accessToken(of: request)?.token ?? ""
        if token.hasPrefix(AdminKeys.prefix) {
            guard let key = try await AdminKeys.find(token, store: self.store) else { throw APIError.unauthenticated("unknown admin key") }
            return .service(name: key.name)
        }
        return .user(try await self.authenticator.authenticate(request))
    }

    /// A session the caller chose to send (approve): checked if present.
    func optionalSession(_ request: Request) async throws -> AuthenticatedSession? {
        guard request.headers[.authorization] != nil else { return nil }
        return try await self.authenticator.authenticate(request)
    }

    // MARK: Routes

    struct CreateInput {
        var summary: String
        var details: [String: TouchstoneConfirmation.JSONValue]
        var userId: String?
        var ttlSeconds: Int

        /// Read with the strict parser, so the details' numbers and strings are exactly what is signed.
        init(json bytes: [UInt8]) throws {
            let value: TouchstoneConfirmation.JSONValue
            do {
                value = try StrictJSONParser(maximumDepth: 1 + ConfirmationText.maximumDetailsDepth, maximumBytes: 16 * 1024).parse(bytes)
            } catch {
                throw APIError.invalidRequest(error.path.isEmpty ? "request body: \(error.reason)" : "field '\(error.path)': \(error.reason)")
            }
            guard case .object(let members) = value else { throw APIError.invalidRequest("request body must be a JSON object") }
            if let unknown = members.keys.first(where: { !["summary", "details", "userId", "ttlSeconds"].contains($0) }) {
                throw APIError.invalidRequest("unknown field '\(unknown)'")
            }
            do {
                guard let summary = members["summary"] else { throw JSONInputError(path: "summary", reason: "is required") }
                guard case .string(let text) = summary else { throw JSONInputError(path: "summary", reason: "must be a string") }
                self.summary = try ConfirmationText.summary(text)
                if let details = members["details"] {
                    self.details = try ConfirmationText.details(details)
                } else {
                    self.details = [:]
                }
                switch members["userId"] {
                case nil: self.userId = nil
                case .string(let id)? where !id.isEmpty && id.unicodeScalars.count <= 64:
                    do throws(FieldError) {
                        try InputRules.noControlCharacters(id, field: "userId")
                    } catch {
                        throw APIError.invalidRequest(error.message)
                    }
                    self.userId = id
                default: throw JSONInputError(path: "userId", reason: "must be a user id")
                }
                switch members["ttlSeconds"] {
                case nil: self.ttlSeconds = ConfirmationService.defaultLifetime
                case .number(let seconds)? where seconds.rounded() == seconds && ConfirmationService.lifetimes.contains(Int(seconds)):
                    self.ttlSeconds = Int(seconds)
                default:
                    throw JSONInputError(path: "ttlSeconds", reason: "must be a whole number of seconds from 10 to 3600")
                }
            } catch let error as JSONInputError {
                throw APIError.invalidRequest("field '\(error.path)' \(error.reason)")
            }
        }
    }

    struct Created: Encodable {
        var confirmation: ConfirmationResource
        var payload: String
    }

    /// `POST /v1/confirmations`: by the user's app (session) or the app's backend (admin key, naming `userId`).
    @Sendable func create(request: Request, context: Context) async throws -> JSONResponse<Created> {
        let caller = try await self.caller(request)
        let input = try CreateInput(json: try await request.collectJSONBody(context: context))
        let userId: String
        let createdBy: String
        switch caller {
        case .user(let session):
            if let named = input.userId, named != session.user.id {
                throw APIError.invalidRequest("field 'userId' is for service callers; a session makes confirmations for its own user")
            }
            userId = session.user.id
            createdBy = "user"
        case .service(let name):
            guard let named = input.userId else { throw APIError.invalidRequest("field 'userId' is required for a service caller") }
            guard try await self.store.user(id: named) != nil else { throw APIError.userNotFound }
            userId = named
            createdBy = "service:\(name)"
        }
        let record = try await self.service.create(
            summary: input.summary,
            details: input.details,
            userId: userId,
            lifetime: input.ttlSeconds,
            createdBy: createdBy
        )
        return JSONResponse(.created, Created(confirmation: ConfirmationResource(record, now: self.service.now()), payload: record.payload))
    }

    struct Answer: Encodable {
        var confirmation: ConfirmationResource
        var receipt: String?
        /// On GET: the payload to sign, so a device that was sent only the id can show and sign it.
        var payload: String?
    }

    @Sendable func get(request: Request, context: Context) async throws -> JSONResponse<Answer> {
        let record = try await self.service.find(try context.parameters.require("id"), for: try await self.caller(request))
        return JSONResponse(.ok, Answer(confirmation: ConfirmationResource(record, now: self.service.now()), payload: record.payload))
    }

    @Sendable func decline(request: Request, context: Context) async throws -> JSONResponse<Answer> {
        let record = try await self.service.decline(try context.parameters.require("id"), caller: try await self.caller(request))
        return JSONResponse(.ok, Answer(confirmation: ConfirmationResource(record, now: self.service.now())))
    }

    struct EvidenceAnswer: Encodable {
        var evidence: ConfirmationEvidence
    }

    @Sendable func evidence(request: Request, context: Context) async throws -> JSONResponse<EvidenceAnswer> {
        JSONResponse(.ok, EvidenceAnswer(evidence: try await self.service.evidence(try context.parameters.require("id"), caller: try await self.caller(request))))
    }

    struct ApproveInput: Decodable {
        var registrationId: String
        var signature: [UInt8]

        enum CodingKeys: CodingKey { case registrationId, signature }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.registrationId = try container.decodeString(.registrationId, maxLength: 64)
            self.signature = try decodeBase64Field(try container.decodeString(.signature, maxLength: 4096), field: "signature", maxLength: 2048)
        }
    }

    /// `POST /v1/confirmations/{id}/approve` `{"registrationId", "signature"}`: the device key's signature over the
    /// payload's UTF-8 bytes.
    @Sendable func approve(request: Request, context: Context) async throws -> JSONResponse<Answer> {
        let input = try await request.decodeJSON(as: ApproveInput.self, context: context)
        try await self.limiter.checkAccount("registration:\(input.registrationId)", registrationId: input.registrationId)
        let session = try await self.optionalSession(request)
        let (record, receipt) = try await self.service.approveWithDeviceKey(
            try context.parameters.require("id"),
            registrationId: input.registrationId,
            signature: input.signature,
            session: session
        )
        return JSONResponse(.ok, Answer(confirmation: ConfirmationResource(record, now: self.service.now()), receipt: receipt))
    }

    /// `POST /v1/confirmations/{id}/passkey-options` (the owner's session).
    @Sendable func passkeyOptions(request: Request, context: Context) async throws -> JSONResponse<RequestOptionsJSON> {
        guard case .user(let session) = try await self.caller(request) else {
            throw APIError.unauthenticated("the confirmation's user must ask for passkey options with a session")
        }
        return JSONResponse(
            .ok,
            try await self.service.passkeyOptions(try context.parameters.require("id"), session: session, timeout: self.passkeyTimeoutMilliseconds)
        )
    }

    /// `POST /v1/confirmations/{id}/passkey-verify`: an `AuthenticationResponseJSON` over the SHA-256 of the payload.
    @Sendable func passkeyVerify(request: Request, context: Context) async throws -> JSONResponse<Answer> {
        let body = try await request.decodeAuthenticationResponse(context: context)
        try await self.limiter.checkAccount("credential:\(body.rawId)")
        let (record, receipt) = try await self.service.approveWithPasskey(try context.parameters.require("id"), response: body)
        return JSONResponse(.ok, Answer(confirmation: ConfirmationResource(record, now: self.service.now()), receipt: receipt))
    }
}

/// `confirmation` in responses.
struct ConfirmationResource: Encodable {
    var id: String
    /// `pending`, `approved`, `declined` or `expired` (pending past its lifetime).
    var status: String
    var summary: String
    var details: TouchstoneConfirmation.JSONValue
    var createdAt: String
    var expiresAt: String
    var approvedAt: String?
    var declinedAt: String?
    var method: String?
    var registrationId: String?
    var passkeyId: String?

    init(_ record: ConfirmationRecord, now: Date) {
        self.id = record.id
        switch record.status {
        case .pending: self.status = now < record.expiresAt ? "pending" : "expired"
        case .approved: self.status = "approved"
        case .declined: self.status = "declined"
        }
        self.summary = record.summary
        self.details = (try? StrictJSONParser().parse(Array(record.details.utf8))) ?? .object([:])
        self.createdAt = record.createdAt.rfc3339
        self.expiresAt = record.expiresAt.rfc3339
        if record.status == .approved { self.approvedAt = record.decidedAt?.rfc3339 }
        if record.status == .declined { self.declinedAt = record.decidedAt?.rfc3339 }
        self.method = record.approval?.method
        self.registrationId = record.approval?.registrationId
        self.passkeyId = record.approval?.passkeyId
    }
}
