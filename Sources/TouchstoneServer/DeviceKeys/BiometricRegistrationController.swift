import Foundation
import Hummingbird
import TouchstoneCrypto
import TouchstoneStore

/// Enrolment and management of device keys: `/v1/biometrics/registrations...` (all need a session).
struct BiometricRegistrationController {
    typealias Context = TouchstoneRequestContext

    let service: BiometricService
    let appAttest: AppAttestService
    let requireAppAttest: Bool
    let androidKeyAttestation: AndroidKeyAttestationService
    let requireAndroidKeyAttestation: Bool
    let store: any TouchstoneStore
    let pins: PinService
    let limiter: RateLimiter
    let audit: AuditLog

    func addRoutes(to router: Router<Context>, authenticator: SessionAuthenticator) {
        let group = router.group("/v1/biometrics/registrations").add(middleware: authenticator)
        group.post("/start", use: self.start)
        router.group("/v1/android-key-attestation").add(middleware: authenticator).post("/challenges", use: self.androidChallenge)
        group.post("/finish", use: self.finish)
        group.get(use: self.list)
        group.delete("/:id", use: self.delete)
        group.post("/:id/unlock", use: self.unlock)
        group.post("/:id/proof-key", use: self.addProofKey)
        group.put("/:id/pin", use: self.setPin)
        group.delete("/:id/pin", use: self.removePin)
        // No session: the device reporting that its key is gone usually has no way left to sign in.
        router.group().add(middleware: AddressRateLimitMiddleware(limiter: self.limiter, group: "device"))
            .post("/v1/biometrics/registrations/:id/invalidate", use: self.invalidate)
    }

    struct StartInput: Decodable {
        var publicKey: String
        var algorithm: String
        var deviceId: String
        var deviceName: String?
        var appAttest: AppAttestProof?
        /// The Android Keystore attestation chain of the key: base64 DER certificates, leaf first.
        var keyAttestation: [String]?

        enum CodingKeys: CodingKey { case publicKey, algorithm, deviceId, deviceName, appAttest, keyAttestation }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.publicKey = try container.decodeString(.publicKey, maxLength: 2 * DevicePublicKey.maxEncodedLength, allowLineBreaks: true)
            self.algorithm = try container.decodeString(.algorithm, maxLength: 16)
            self.deviceId = try container.decodeString(.deviceId, maxLength: 200)
            self.deviceName = try container.decodeDisplayTextIfPresent(.deviceName)
            self.appAttest = try container.decodeIfPresent(AppAttestProof.self, forKey: .appAttest)
            self.keyAttestation = try container.decodeIfPresent([String].self, forKey: .keyAttestation)
        }
    }

    @Sendable func start(request: Request, context: Context) async throws -> JSONResponse<ChallengeResponse> {
        let caller = try context.requireIdentity()
        let input = try await request.decodeJSON(as: StartInput.self, context: context)
        let integrity = EnrolmentIntegrity(
            appAttest: self.appAttest,
            androidKeyAttestation: self.androidKeyAttestation,
            requireAppAttest: self.requireAppAttest,
            requireAndroidKeyAttestation: self.requireAndroidKeyAttestation
        )
        let checked = try await integrity.check(
            appAttest: input.appAttest, keyAttestation: input.keyAttestation, publicKey: input.publicKey, userId: caller.user.id)
        let started = try await self.service.startRegistration(
            caller: caller,
            publicKey: input.publicKey,
            algorithm: input.algorithm,
            deviceId: input.deviceId,
            deviceName: input.deviceName,
            appAttestKeyId: checked.appAttestKeyId,
            attestKey: checked.attestKey
        )
        return JSONResponse(.ok, ChallengeResponse(started))
    }

    struct AndroidChallengeBody: Encodable {
        var challenge: String
        var expiresAt: String
    }

    /// `POST /v1/android-key-attestation/challenges`: the attestation challenge for the key the app is about to make.
    @Sendable func androidChallenge(request: Request, context: Context) async throws -> JSONResponse<AndroidChallengeBody> {
        let caller = try context.requireIdentity()
        let issued = try await self.androidKeyAttestation.issueChallenge(userId: caller.user.id)
        return JSONResponse(.ok, AndroidChallengeBody(challenge: issued.challenge, expiresAt: issued.expiresAt.rfc3339))
    }

    struct FinishInput: Decodable {
        var registrationId: String
        var signature: String
        /// The phone's DPoP proof key (issue #43), optional.
        var proofKey: ProofKeyInput.Fields

        enum CodingKeys: CodingKey { case registrationId, signature }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.registrationId = try container.decodeString(.registrationId, maxLength: 64)
            self.signature = try container.decodeString(.signature, maxLength: 4096)
            self.proofKey = try ProofKeyInput.Fields(from: decoder)
        }
    }

    struct RegistrationBody: Encodable { var registration: RegistrationResource }
    /// Enrolment's answer: the registration and its device credential (shown once).
    struct EnrolledBody: Encodable {
        var registration: RegistrationResource
        var deviceCredential: String
    }
    struct RegistrationList: Encodable { var registrations: [RegistrationResource] }

    @Sendable func finish(request: Request, context: Context) async throws -> JSONResponse<EnrolledBody> {
        let caller = try context.requireIdentity()
        let input = try await request.decodeJSON(as: FinishInput.self, context: context)
        let signature = try decodeSignature(input.signature)
        var proofKey = try ProofKeyInput.parse(input.proofKey)
        try await proofKey?.verifyAttestation(with: self.androidKeyAttestation)
        let (registration, credential) = try await self.audit.failures(.registrationFinished, userId: caller.user.id, registrationId: input.registrationId) {
            try await self.service.finishRegistration(caller: caller, registrationId: input.registrationId, signature: signature, proofKey: proofKey)
        }
        return JSONResponse(
            .created, EnrolledBody(registration: RegistrationResource(registration), deviceCredential: credential), headers: [.cacheControl: "no-store"])
    }

    @Sendable func list(request: Request, context: Context) async throws -> JSONResponse<RegistrationList> {
        let caller = try context.requireIdentity()
        let registrations = try await self.store.registrations(userId: caller.user.id)
        return JSONResponse(.ok, RegistrationList(registrations: registrations.map(RegistrationResource.init)))
    }

    struct ProofKeyAddition: Decodable {
        var challenge: String
        var signature: String
        var proofKey: ProofKeyInput.Fields

        enum CodingKeys: CodingKey { case challenge, signature }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.challenge = try container.decodeString(.challenge, maxLength: 512)
            self.signature = try container.decodeString(.signature, maxLength: 4096)
            self.proofKey = try ProofKeyInput.Fields(from: decoder)
        }
    }

    /// `POST /v1/biometrics/registrations/{id}/proof-key` `{challenge, signature, proofKey, proofKeySignature}`: a DPoP
    /// proof key for a registration enrolled without one (issue #43).
    @Sendable func addProofKey(request: Request, context: Context) async throws -> JSONResponse<RegistrationBody> {
        let caller = try context.requireIdentity()
        let id = try context.parameters.require("id")
        let input = try await request.decodeJSON(as: ProofKeyAddition.self, context: context)
        let signature = try decodeSignature(input.signature)
        guard var proofKey = try ProofKeyInput.parse(input.proofKey) else { throw APIError.invalidProofKey("proofKey is required") }
        try await proofKey.verifyAttestation(with: self.androidKeyAttestation)
        let registration = try await self.service.addProofKey(
            caller: caller, registrationId: id, challenge: input.challenge, signature: signature, proofKey: proofKey)
        return JSONResponse(.ok, RegistrationBody(registration: RegistrationResource(registration)))
    }

    /// `POST /v1/biometrics/registrations/{id}/unlock` (fresh strong authentication).
    @Sendable func unlock(request: Request, context: Context) async throws -> JSONResponse<RegistrationBody> {
        let caller = try context.requireIdentity()
        let id = try context.parameters.require("id")
        let registration = try await self.service.unlockRegistration(caller: caller, registrationId: id)
        return JSONResponse(.ok, RegistrationBody(registration: RegistrationResource(registration)))
    }

    @Sendable func delete(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let caller = try context.requireIdentity()
        let id = try context.parameters.require("id")
        try await self.service.deleteRegistration(caller: caller, registrationId: id)
        return .noContent
    }

    struct PinInput: Decodable {
        var pin: String

        enum CodingKeys: CodingKey { case pin }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.pin = try container.decodeString(.pin, maxLength: 8) { (text) throws(FieldError) in try InputRules.pin(text) }
        }
    }

    /// `PUT /v1/biometrics/registrations/{id}/pin` `{"pin"}` (fresh strong authentication).
    @Sendable func setPin(request: Request, context: Context) async throws -> JSONResponse<RegistrationBody> {
        let caller = try context.requireIdentity()
        let id = try context.parameters.require("id")
        let input = try await request.decodeJSON(as: PinInput.self, context: context)
        let registration = try await self.pins.setPin(caller: caller, registrationId: id, pin: input.pin)
        return JSONResponse(.ok, RegistrationBody(registration: RegistrationResource(registration)))
    }

    /// `DELETE /v1/biometrics/registrations/{id}/pin`.
    @Sendable func removePin(request: Request, context: Context) async throws -> HTTPResponse.Status {
        try await self.pins.removePin(caller: try context.requireIdentity(), registrationId: try context.parameters.require("id"))
        return .noContent
    }
}

extension BiometricRegistrationController {
    struct InvalidateInput: Decodable {
        var reason: String
        var deviceId: String

        enum CodingKeys: CodingKey { case reason, deviceId }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.reason = try container.decodeString(.reason, maxLength: 32)
            self.deviceId = try container.decodeString(.deviceId, maxLength: 200)
        }
    }

    /// `POST /v1/biometrics/registrations/{id}/invalidate` `{"reason","deviceId"}`: the device's key can no longer be
    /// used. Needs no session, but the registration id and the device id it was enrolled from, which only the device
    /// and its owner know; all it can do is end a registration, as the device's owner could.
    @Sendable func invalidate(request: Request, context: Context) async throws -> HTTPResponse.Status {
        let id = try context.parameters.require("id")
        let input = try await request.decodeJSON(as: InvalidateInput.self, context: context)
        try await self.limiter.checkAccount("registration:\(id)", registrationId: id)
        guard let reason = BiometricService.InvalidationReason(rawValue: input.reason) else {
            let names = BiometricService.InvalidationReason.allCases.map(\.rawValue).joined(separator: ", ")
            throw APIError.invalidRequest("field 'reason' must be one of \(names)")
        }
        try await self.service.invalidateRegistration(registrationId: id, deviceId: input.deviceId, reason: reason)
        return .noContent
    }
}

extension ChallengeResponse {
    init(_ started: BiometricService.StartedChallenge) {
        self.init(registrationId: started.registrationId, challenge: started.challenge, expiresAt: started.expiresAt.rfc3339)
    }
}

/// Decodes a signature sent as base64url or standard base64, or answers 400 `invalid_request`.
func decodeSignature(_ text: String) throws -> [UInt8] {
    try decodeBase64Field(text, field: "signature", maxLength: 2048)
}

/// Decodes a non-empty request field sent as base64url or standard base64, or answers 400 `invalid_request` naming it.
///
/// `maxLength` bytes are what the OpenAPI document's `maxLength` in characters (4 per 3 bytes, rounded up) is written
/// for; a text of that many characters without padding holds up to the next multiple of 3 bytes, and is accepted, so
/// that every schema-valid value is (a too-long signature then simply fails to verify).
func decodeBase64Field(_ text: String, field: String, maxLength: Int) throws -> [UInt8] {
    guard let bytes = Base64.decode(text, maxDecodedLength: (maxLength + 2) / 3 * 3), !bytes.isEmpty else {
        throw APIError.invalidRequest("field '\(field)' is not base64 or base64url")
    }
    return bytes
}
