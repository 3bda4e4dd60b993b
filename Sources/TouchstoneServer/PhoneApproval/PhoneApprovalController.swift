import Foundation
import Hummingbird
import TouchstoneConfirmation
import TouchstoneCrypto
import TouchstoneStore

/// Sign-ins approved on a phone: `/v1/sign-in-requests...` (the browser and the phone) and the device channel of a
/// registration (`/v1/biometrics/registrations/{id}/device-credential`, `.../push-token`).
struct PhoneApprovalController {
    typealias Context = TouchstoneRequestContext

    let service: PhoneApprovalService
    let store: any TouchstoneStore
    let limiter: RateLimiter

    func addRoutes(to router: Router<Context>, authenticator: SessionAuthenticator) {
        // Every route is open to callers without a session: limited per client address.
        let group = router.group("/v1/sign-in-requests").add(middleware: AddressRateLimitMiddleware(limiter: self.limiter, group: "sign_in_request"))
        group.post(use: self.create)
        group.get("/pending", use: self.pending)
        group.get("/:id", use: self.get)
        group.post("/:id/approve", use: self.approve)
        group.post("/:id/decline", use: self.decline)
        router.group("/v1/biometrics/registrations").add(middleware: authenticator).post("/:id/device-credential", use: self.deviceCredential)
        router.group("/v1/biometrics/registrations").add(middleware: AddressRateLimitMiddleware(limiter: self.limiter, group: "device"))
            .put("/:id/push-token", use: self.pushToken)
    }

    // MARK: The browser

    struct CreateInput: Decodable {
        var email: String?
        var clientId: String?

        enum CodingKeys: CodingKey { case email, clientId }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.email = try container.decodeEmailIfPresent(.email)
            self.clientId = try container.decodeStringIfPresent(.clientId, maxLength: 64)
        }
    }

    struct Created: Encodable {
        var requestId: String
        var pollToken: String
        var number: Int
        var expiresAt: String
        var qr: String
        /// `qr` as an SVG QR code, for a page to show.
        var qrSvg: String
    }

    /// `POST /v1/sign-in-requests` `{"email"?, "clientId"?}` → 201, the same for every address.
    @Sendable func create(request: Request, context: Context) async throws -> JSONResponse<Created> {
        let input = try await request.decodeJSON(as: CreateInput.self, context: context)
        var client: OAuthClientRecord?
        if let clientId = input.clientId {
            guard let found = try await self.store.client(id: clientId) else {
                throw APIError.invalidRequest("field 'clientId' names no registered client")
            }
            client = found
        }
        let created = try await self.service.create(email: input.email, client: client, browser: context.client)
        return JSONResponse(
            .created,
            Created(
                requestId: created.record.id,
                pollToken: created.pollToken,
                number: created.record.number ?? 0,
                expiresAt: created.record.expiresAt.rfc3339,
                qr: created.qr ?? "",
                qrSvg: (try? QRCode(text: created.qr ?? "").svg(moduleSize: 5, title: "QR code: scan it with your phone's app to sign in")) ?? ""
            ),
            headers: [.cacheControl: "no-store"]
        )
    }

    /// The browser's answer: the status, and on the first answer after an approval, the session.
    struct Status: Encodable {
        var status: String
        var user: UserResource?
        var session: SessionResource?

        enum CodingKeys: CodingKey { case status, user, session }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.status, forKey: .status)
            try container.encodeIfPresent(self.user, forKey: .user)
            try container.encodeIfPresent(self.session, forKey: .session)
        }
    }

    /// `GET /v1/sign-in-requests/{id}`: with `Authorization: Bearer <pollToken>` (and `?wait=N`), the browser's
    /// status; with `Authorization: Device ...` and `?secret=`, the request as a phone that scanned the QR code reads it.
    @Sendable func get(request: Request, context: Context) async throws -> Response {
        let id = try context.parameters.require("id")
        let query = request.uri.queryParameters
        let header = request.headers[.authorization]
        if let header, header.lowercased().hasPrefix("device ") {
            guard let secret = query["secret"].map(String.init), !secret.isEmpty, secret.utf8.count <= 128 else {
                throw APIError.invalidRequest("the query parameter 'secret' (from the QR code) is required with a device credential")
            }
            let registration = try await self.service.authenticateDevice(header)
            try await self.limiter.checkAccount("registration:\(registration.id)", registrationId: registration.id)
            let view = try await self.service.scanned(id, secret: secret, by: registration)
            return try JSONResponse(.ok, PendingRequest(view), headers: [.cacheControl: "no-store"]).response(from: request, context: context)
        }
        var wait = 0
        if let text = query["wait"] {
            guard let seconds = Int(String(text)), (0...self.service.settings.maximumWait).contains(seconds), text.allSatisfy(\.isASCII) else {
                throw APIError.invalidRequest("the query parameter 'wait' must be a whole number of seconds from 0 to \(self.service.settings.maximumWait)")
            }
            wait = seconds
        }
        let answer = try await self.service.poll(id, pollToken: try request.bearerToken(), wait: wait)
        let body = Status(
            status: answer.status,
            user: answer.signedIn.map { UserResource($0.user) },
            session: answer.signedIn.map { SessionResource(token: $0.token, record: $0.session) }
        )
        return try JSONResponse(.ok, body, headers: [.cacheControl: "no-store"]).response(from: request, context: context)
    }

    // MARK: The phone

    /// A request as the phone shows it.
    struct PendingRequest: Encodable {
        var requestId: String
        var client: String
        /// Three numbers, the right one among them (empty for a backchannel request).
        var numbers: [Int]
        var payload: SignInApproval.Payload

        init(_ view: PhoneApprovalService.PhoneView) {
            self.requestId = view.record.id
            self.client = view.record.clientName
            self.numbers = view.record.choices
            self.payload = view.payload
        }
    }

    struct PendingList: Encodable { var requests: [PendingRequest] }

    /// `GET /v1/sign-in-requests/pending` (device credential).
    @Sendable func pending(request: Request, context: Context) async throws -> JSONResponse<PendingList> {
        let registration = try await self.service.authenticateDevice(request.headers[.authorization])
        try await self.limiter.checkAccount("registration:\(registration.id)", registrationId: registration.id)
        let views = try await self.service.pending(for: registration)
        return JSONResponse(.ok, PendingList(requests: views.map(PendingRequest.init)), headers: [.cacheControl: "no-store"])
    }

    struct ApproveInput: Decodable {
        var registrationId: String
        var choice: Int?
        var signature: [UInt8]

        enum CodingKeys: CodingKey { case registrationId, choice, signature }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.registrationId = try container.decodeString(.registrationId, maxLength: 64)
            self.choice = try container.decodeIntegerIfPresent(.choice)
            if let choice = self.choice, !(10...99).contains(choice) {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: [CodingKeys.choice], debugDescription: "",
                        underlyingError: FieldError(message: "field 'choice' must be a number from 10 to 99, or null")))
            }
            self.signature = try decodeBase64Field(try container.decodeString(.signature, maxLength: 4096), field: "signature", maxLength: 2048)
        }
    }

    struct Decided: Encodable {
        struct Summary: Encodable {
            var id: String
            var status: String
        }
        var signInRequest: Summary
    }

    /// `POST /v1/sign-in-requests/{id}/approve` `{"registrationId", "choice", "signature"}`.
    @Sendable func approve(request: Request, context: Context) async throws -> JSONResponse<Decided> {
        let input = try await request.decodeJSON(as: ApproveInput.self, context: context)
        try await self.limiter.checkAccount("registration:\(input.registrationId)", registrationId: input.registrationId)
        let record = try await self.service.decide(
            try context.parameters.require("id"), registrationId: input.registrationId, decision: .approve(choice: input.choice),
            signature: input.signature)
        return JSONResponse(.ok, Decided(signInRequest: .init(id: record.id, status: self.service.status(of: record))))
    }

    struct DeclineInput: Decodable {
        var registrationId: String
        var reason: SignInApproval.DeclineReason
        var signature: [UInt8]

        enum CodingKeys: CodingKey { case registrationId, reason, signature }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.registrationId = try container.decodeString(.registrationId, maxLength: 64)
            let reason = try container.decodeString(.reason, maxLength: 16)
            guard let known = SignInApproval.DeclineReason(rawValue: reason) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: [CodingKeys.reason], debugDescription: "",
                        underlyingError: FieldError(message: "field 'reason' must be not_me or cancel")))
            }
            self.reason = known
            self.signature = try decodeBase64Field(try container.decodeString(.signature, maxLength: 4096), field: "signature", maxLength: 2048)
        }
    }

    /// `POST /v1/sign-in-requests/{id}/decline` `{"registrationId", "reason", "signature"}`.
    @Sendable func decline(request: Request, context: Context) async throws -> JSONResponse<Decided> {
        let input = try await request.decodeJSON(as: DeclineInput.self, context: context)
        try await self.limiter.checkAccount("registration:\(input.registrationId)", registrationId: input.registrationId)
        let record = try await self.service.decide(
            try context.parameters.require("id"), registrationId: input.registrationId, decision: .decline(input.reason),
            signature: input.signature)
        return JSONResponse(.ok, Decided(signInRequest: .init(id: record.id, status: self.service.status(of: record))))
    }

    // MARK: The device channel

    struct CredentialBody: Encodable { var deviceCredential: String }

    /// `POST /v1/biometrics/registrations/{id}/device-credential` (the owner's session): a new device credential for
    /// a registration enrolled before they existed (or to replace a lost one), shown once.
    @Sendable func deviceCredential(request: Request, context: Context) async throws -> JSONResponse<CredentialBody> {
        let caller = try context.requireIdentity()
        let id = try context.parameters.require("id")
        guard let registration = try await self.store.registration(id: id), registration.userId == caller.user.id,
            registration.status != .pending
        else {
            throw APIError.registrationNotFound
        }
        guard registration.status == .active else {
            throw registration.status == .locked ? APIError.registrationLocked : APIError.registrationRevoked
        }
        let credential = try await self.service.issueDeviceCredential(registrationId: id)
        return JSONResponse(.created, CredentialBody(deviceCredential: credential), headers: [.cacheControl: "no-store"])
    }

    struct PushTokenInput: Decodable {
        var platform: String
        var token: String

        enum CodingKeys: CodingKey { case platform, token }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.platform = try container.decodeString(.platform, maxLength: 16)
            guard self.platform == "apns" else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: [CodingKeys.platform], debugDescription: "", underlyingError: FieldError(message: "field 'platform' must be apns")))
            }
            self.token = try container.decodeString(.token, maxLength: 200)
            // An APNs device token: hex (32 bytes today; Apple allows them to grow, up to 100 bytes here).
            guard self.token.count.isMultiple(of: 2), (16...200).contains(self.token.count),
                self.token.allSatisfy({ $0.isASCII && $0.isHexDigit })
            else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: [CodingKeys.token], debugDescription: "",
                        underlyingError: FieldError(message: "field 'token' must be the APNs device token in hex (16 to 200 digits)")))
            }
            self.token = self.token.lowercased()
        }
    }

    /// `PUT /v1/biometrics/registrations/{id}/push-token` `{"platform": "apns", "token"}` (the registration's device
    /// credential) → 204.
    @Sendable func pushToken(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let registration = try await self.service.authenticateDevice(request.headers[.authorization])
        guard registration.id == (try context.parameters.require("id")) else {
            throw APIError.invalidDeviceCredential
        }
        let input = try await request.decodeJSON(as: PushTokenInput.self, context: context)
        guard try await self.store.setPushToken(registrationId: registration.id, platform: input.platform, token: input.token, at: self.service.now())
        else {
            throw APIError.invalidDeviceCredential
        }
        return .noContent
    }
}
