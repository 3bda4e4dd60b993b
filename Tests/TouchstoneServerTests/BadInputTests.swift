import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// Bad input gets a 4xx in the error format, never a 500.
struct BadInputTests {
    static let endpoints = [
        "/v1/users", "/v1/sessions", "/v1/biometrics/authentications/start", "/v1/biometrics/authentications/finish",
        "/v1/password-resets", "/v1/password-resets/confirm", "/v1/email-codes", "/v1/email-codes/verify",
        "/v1/email/verification/confirm", "/v1/recovery-codes/verify",
    ]

    @Test(arguments: endpoints)
    func malformedBodiesAreInvalidRequests(path: String) async throws {
        try await TestServer.run { client in
            for raw in ["", "{", "[]", "null", "42", "\"text\"", "{\"email\": 5}", "{\"registrationId\": [1]}", "\u{0}"] {
                let response = try await client.request(.post, path, raw: raw)
                #expect(response.status == .badRequest, "\(path) with \(raw.debugDescription)")
                #expect(response.errorCode == "invalid_request")
            }
        }
    }

    @Test func deeplyNestedJSONIsAnInvalidRequest() async throws {
        try await TestServer.run { client in
            let nested = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
            let response = try await client.request(.post, "/v1/sessions", raw: "{\"email\": \(nested)}")
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_request")
        }
    }

    @Test func oversizedBodiesAreRejected() async throws {
        try await TestServer.run { client in
            let big = "{\"email\": \"" + String(repeating: "a", count: 70_000) + "\"}"
            let response = try await client.request(.post, "/v1/users", raw: big)
            #expect(response.status == .contentTooLarge)
            #expect(response.errorCode == "payload_too_large")
        }
    }

    @Test func overlongFieldsAreRejectedNamingTheField() async throws {
        try await TestServer.run { client in
            let response = try await client.request(
                .post,
                "/v1/biometrics/authentications/finish",
                json: ["registrationId": String(repeating: "r", count: 65), "challenge": "c", "signature": "s"]
            )
            #expect(response.errorCode == "invalid_request")
            #expect((response.json["error"] as? [String: Any])?["message"] as? String == "field 'registrationId' is longer than 64 characters")
        }
    }

    @Test func anUnavailableDatabaseAnswers503() async throws {
        try await TestServer.run(store: FailingStore(error: StoreError.unavailable("disk gone"))) { client in
            let response = try await client.request(.post, "/v1/sessions", json: ["email": "a@example.com", "password": "x"])
            #expect(response.status == .serviceUnavailable)
            #expect(response.errorCode == "storage_unavailable")
        }
    }

    @Test func anUnavailableDatabaseAnswers503OnTheRecoveryRoutes() async throws {
        try await TestServer.run(configuration: TestServer.configuration { $0.rateLimits.enabled = true }, store: FailingStore(error: StoreError.unavailable("disk gone"))) { client in
            let requests: [(String, [String: any Sendable])] = [
                ("/v1/password-resets", ["email": "a@example.com"]),
                ("/v1/email-codes", ["email": "a@example.com"]),
                ("/v1/email-codes/verify", ["email": "a@example.com", "code": "123456"]),
                ("/v1/password-resets/confirm", ["email": "a@example.com", "code": "123456", "newPassword": "a new passphrase 1"]),
                ("/v1/recovery-codes/verify", ["email": "a@example.com", "code": "k7m2p-9xq4r"]),
                ("/v1/email/verification/confirm", ["token": String(repeating: "A", count: 43)]),
            ]
            for (path, body) in requests {
                let response = try await client.request(.post, path, json: body)
                #expect(response.status == .serviceUnavailable && response.errorCode == "storage_unavailable", "\(path)")
            }
        }
    }

    @Test func anUnavailableDatabaseAnswersOAuthsTemporarilyUnavailable() async throws {
        try await TestServer.run(store: FailingStore(error: StoreError.unavailable("disk gone"))) { client in
            let response = try await client.request(.post, "/oauth2/token", raw: "grant_type=refresh_token&refresh_token=x&client_id=c",
                headers: [.contentType: "application/x-www-form-urlencoded"])
            #expect(response.status == .serviceUnavailable)
            #expect(response.json["error"] as? String == "temporarily_unavailable")
            #expect(response.headers[.cacheControl] == "no-store")
        }
    }

    @Test func anUnexpectedFaultAnswers500WithoutDetail() async throws {
        struct Boom: Error {}
        try await TestServer.run(store: FailingStore(error: Boom())) { client in
            let response = try await client.request(.post, "/v1/sessions", json: ["email": "a@example.com", "password": "x"])
            #expect(response.status == .internalServerError)
            #expect(response.errorCode == "internal_error")
            #expect((response.json["error"] as? [String: Any])?["message"] as? String == "an unexpected error occurred")
        }
    }
}

/// A store whose reads and writes all fail, to check how the server reports database faults.
struct FailingStore: TouchstoneStore {
    let error: any Error & Sendable

    func migrate() async throws {}
    func checkHealth() async throws { throw self.error }
    func recordFailedCredentialCheck(address: String, limit: Int64, window: TimeInterval, at: Date) async throws -> AddressFailures {
        throw self.error
    }
    func addressBlock(address: String, at: Date) async throws -> AddressFailures? { throw self.error }
    func blockedAddresses(at: Date, limit: Int) async throws -> [AddressFailures] { throw self.error }
    func clearAddressFailures(address: String, at: Date) async throws -> Bool { throw self.error }
    func signingKeys() async throws -> [SigningKeyRecord] { throw self.error }
    func insertSigningKey(_ key: SigningKeyRecord) async throws -> Bool { throw self.error }
    func session(id: String) async throws -> SessionRecord? { throw self.error }
    func assignSessionId(tokenHash: String, id: String) async throws -> String? { throw self.error }
    func insertConfirmation(_ confirmation: ConfirmationRecord) async throws { throw self.error }
    func confirmation(id: String) async throws -> ConfirmationRecord? { throw self.error }
    func confirmations(userId: String, limit: Int) async throws -> [ConfirmationRecord] { throw self.error }
    func decideConfirmation(id: String, approval: ConfirmationRecord.Approval?, events: [AuditEventRecord], at: Date) async throws -> Bool {
        throw self.error
    }
    func shutdown() async throws {}
    func auditEventCounts(since: Date, bucket: TimeInterval, types: [String]) async throws -> [AuditEventCount] { throw self.error }
    func activeSessions(userId: String, at: Date) async throws -> [SessionRecord] { throw self.error }
    func setRequireDeviceBoundPasskeys(userId: String, required: Bool) async throws -> Bool { throw self.error }
    func insertUser(_ user: UserRecord) async throws { throw self.error }
    func user(id: String) async throws -> UserRecord? { throw self.error }
    func user(email: String) async throws -> UserRecord? { throw self.error }
    func insertSession(_ session: SessionRecord) async throws { throw self.error }
    func session(tokenHash: String) async throws -> SessionRecord? { throw self.error }
    func updateSessionIdleExpiry(tokenHash: String, idleExpiresAt: Date, lastSeenAt: Date) async throws { throw self.error }
    func revokeSession(tokenHash: String, at: Date) async throws -> Bool { throw self.error }
    func reauthenticateSession(tokenHash: String, at: Date, methods: [AuthenticationMethod], strongAuthenticatedAt: Date?, acr: String?)
        async throws -> Bool { throw self.error }
    func insertAuthorizationCode(_ code: AuthorizationCodeRecord) async throws { throw self.error }
    func redeemAuthorizationCode(codeHash: String, at: Date) async throws -> AuthorizationCodeRedemption { throw self.error }
    func insertTokenFamily(_ family: TokenFamilyRecord) async throws { throw self.error }
    func tokenFamily(id: String) async throws -> TokenFamilyRecord? { throw self.error }
    func revokeTokenFamily(id: String, at: Date) async throws -> Bool { throw self.error }
    func revokeTokenFamilies(userId: String, clientId: String, at: Date) async throws -> Int { throw self.error }
    func insertRefreshToken(_ token: RefreshTokenRecord) async throws { throw self.error }
    func useRefreshToken(tokenHash: String, at: Date) async throws -> RefreshTokenUse { throw self.error }
    func refreshToken(tokenHash: String) async throws -> RefreshTokenRecord? { throw self.error }
    func revokeAccessToken(jti: String, expiresAt: Date) async throws { throw self.error }
    func isAccessTokenRevoked(jti: String) async throws -> Bool { throw self.error }
    func consent(userId: String, clientId: String) async throws -> OAuthConsentRecord? { throw self.error }
    func upsertConsent(_ consent: OAuthConsentRecord) async throws { throw self.error }
    func consents(userId: String) async throws -> [OAuthConsentRecord] { throw self.error }
    func deleteConsent(userId: String, clientId: String) async throws -> Bool { throw self.error }
    func openIDClientNames(sessionIds: [String]) async throws -> [String: [String]] { throw self.error }
    func dueLogoutNotices(now: Date, limit: Int) async throws -> [LogoutNoticeRecord] { throw self.error }
    func insertWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws { throw self.error }
    func webhookEndpoint(id: String) async throws -> WebhookEndpointRecord? { throw self.error }
    func webhookEndpoints() async throws -> [WebhookEndpointRecord] { throw self.error }
    func updateWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws -> Bool { throw self.error }
    func deleteWebhookEndpoint(id: String) async throws -> Bool { throw self.error }
    func rotateWebhookSecret(id: String, sealedSecret: [UInt8], previousExpiresAt: Date, at: Date) async throws -> Bool { throw self.error }
    func enqueueWebhookTest(endpointId: String, event: WebhookOutboxEvent) async throws -> Bool { throw self.error }
    func dueWebhookEndpoints(now: Date, limit: Int) async throws -> [String] { throw self.error }
    func claimWebhookMessages(endpointId: String, now: Date, leaseUntil: Date, token: String, limit: Int) async throws -> [WebhookMessageRecord] { throw self.error }
    func finishWebhookAttempt(_ attempt: WebhookAttemptRecord, token: String, outcome: WebhookAttemptOutcome) async throws -> Bool { throw self.error }
    func disableFailingWebhookEndpoint(id: String, since: Date, reason: String, at: Date) async throws -> Bool { throw self.error }
    func webhookDeliveries(endpointId: String, limit: Int) async throws -> [(WebhookMessageRecord, [WebhookAttemptRecord])] { throw self.error }
    func retryWebhookMessage(endpointId: String, eventId: String, at: Date) async throws -> Bool { throw self.error }
    func webhookQueueStatistics() async throws -> WebhookQueueStatistics { throw self.error }
    func webhookSubscribedTypes() async throws -> Set<String> { throw self.error }
    func purgeWebhookMessages(before cutoff: Date) async throws -> Int { throw self.error }
    func deleteUser(id: String, at: Date) async throws -> Bool { throw self.error }
    func enqueueMail(_ mail: QueuedMailRecord) async throws { throw self.error }
    func claimDueMail(now: Date, leaseUntil: Date, token: String, limit: Int) async throws -> [QueuedMailRecord] { throw self.error }
    func finishMailAttempt(id: String, token: String, outcome: MailAttemptOutcome) async throws -> Bool { throw self.error }
    func mailQueueStatistics() async throws -> MailQueueStatistics { throw self.error }
    func purgeFailedMail(before cutoff: Date) async throws -> Int { throw self.error }
    func replaceEmailChallenge(_ challenge: EmailChallengeRecord) async throws { throw self.error }
    func emailChallenge(userId: String, purpose: EmailChallengePurpose) async throws -> EmailChallengeRecord? { throw self.error }
    func emailChallenge(tokenHash: String) async throws -> EmailChallengeRecord? { throw self.error }
    func consumeEmailChallenge(userId: String, purpose: EmailChallengePurpose, codeHash: String, at: Date) async throws -> EmailChallengeRecord? { throw self.error }
    func recordEmailChallengeFailure(userId: String, purpose: EmailChallengePurpose, codeHash: String, limit: Int) async throws -> Int? { throw self.error }
    func deleteEmailChallenge(userId: String, purpose: EmailChallengePurpose) async throws { throw self.error }
    func markEmailVerified(userId: String, email: String, at: Date) async throws -> Bool { throw self.error }
    func changeEmail(userId: String, to email: String, at: Date) async throws -> Bool { throw self.error }
    func replaceRecoveryCodes(userId: String, codeHashes: [String], at: Date) async throws { throw self.error }
    func useRecoveryCode(userId: String, codeHash: String, at: Date) async throws -> Bool { throw self.error }
    func unusedRecoveryCodeCount(userId: String) async throws -> Int { throw self.error }
    func insertSignInRequest(_ request: SignInRequestRecord, maximumPending: Int, events: [AuditEventRecord], at: Date) async throws -> Bool { throw self.error }
    func signInRequest(id: String) async throws -> SignInRequestRecord? { throw self.error }
    func signInRequests(userId: String, limit: Int) async throws -> [SignInRequestRecord] { throw self.error }
    func signInRequest(pollTokenHash: String) async throws -> SignInRequestRecord? { throw self.error }
    func pendingSignInRequests(userId: String, at: Date) async throws -> [SignInRequestRecord] { throw self.error }
    func bindSignInRequest(id: String, userId: String, at: Date) async throws -> Bool { throw self.error }
    func decideSignInRequest(id: String, decision: SignInRequestDecision, events: [AuditEventRecord], at: Date) async throws -> Bool { throw self.error }
    func redeemSignInRequest(id: String, at: Date) async throws -> Bool { throw self.error }
    func recordSignInRequestPoll(id: String, interval: TimeInterval, at: Date) async throws -> Bool { throw self.error }
    func setDeviceCredential(registrationId: String, credentialHash: String, at: Date) async throws { throw self.error }
    func deviceChannel(registrationId: String) async throws -> DeviceChannelRecord? { throw self.error }
    func deviceChannels(userId: String) async throws -> [DeviceChannelRecord] { throw self.error }
    func setPushToken(registrationId: String, platform: String, token: String, at: Date) async throws -> Bool { throw self.error }
    func pausePhoneApprovals(userId: String, until: Date) async throws { throw self.error }
    func clearPushToken(registrationId: String, token: String) async throws { throw self.error }
    func phoneApprovalsPausedUntil(userId: String, at: Date) async throws -> Date? { throw self.error }
    func recordLogoutNotice(clientId: String, sessionId: String, delivered: Bool, retryAt: Date?, error: String?) async throws { throw self.error }
    func insertRegistration(_ registration: RegistrationRecord) async throws { throw self.error }
    func registration(id: String) async throws -> RegistrationRecord? { throw self.error }
    func signInRegistration(id: String) async throws -> SignInRegistrationRecord? { throw self.error }
    func setRegistrationProofKey(id: String, userId: String, thumbprint: String) async throws -> Bool { throw self.error }
    func signInAttempt(registrationId: String, challenge: String) async throws -> SignInAttemptRecord? { throw self.error }
    func latestRegistration(keyFingerprint: String) async throws -> RegistrationRecord? { throw self.error }
    func activeRegistration(deviceId: String) async throws -> RegistrationRecord? { throw self.error }
    func registrations(userId: String) async throws -> [RegistrationRecord] { throw self.error }
    func activateRegistration(id: String, replacing scope: ReplacementScope, at: Date) async throws -> [String] {
        throw self.error
    }
    func updateRegistrationStatus(id: String, from: Set<RegistrationStatus>, to: RegistrationStatus, at: Date) async throws
        -> Bool
    { throw self.error }
    func recordFailedSignature(registrationId: String, threshold: Int64, at: Date) async throws -> Bool { throw self.error }
    func unlockRegistration(id: String, at: Date) async throws -> Bool { throw self.error }
    func insertChallenge(_ challenge: ChallengeRecord) async throws { throw self.error }
    func recordAnsweredChallenge(_ challenge: ChallengeRecord, at: Date) async throws -> Bool { throw self.error }
    func completeSignIn(challenge: ChallengeRecord, session: SessionRecord, events: [AuditEventRecord], at: Date)
        async throws -> UserRecord?
    {
        throw self.error
    }
    func consumeLatestChallenge(registrationId: String, purpose: ChallengePurpose, at: Date) async throws -> ChallengeRecord? {
        throw self.error
    }
    func purgeExpired(before cutoff: Date) async throws -> PurgeResult { throw self.error }
    func unitOfWork<R: Sendable>(_ body: @Sendable (any TouchstoneStore) async throws -> R) async throws -> R { throw self.error }
    func insertClient(_ client: OAuthClientRecord) async throws { throw self.error }
    func client(id: String) async throws -> OAuthClientRecord? { throw self.error }
    func clients() async throws -> [OAuthClientRecord] { throw self.error }
    func deleteClient(id: String) async throws -> Bool { throw self.error }
    func rotateClientSecret(id: String, secretHash: String, at: Date) async throws -> Bool { throw self.error }
    func insertPasskey(_ passkey: PasskeyRecord) async throws { throw self.error }
    func passkey(id: String) async throws -> PasskeyRecord? { throw self.error }
    func passkey(credentialId: String) async throws -> PasskeyRecord? { throw self.error }
    func passkeySignInAttempt(credentialId: String, challenge: String) async throws -> PasskeySignInAttemptRecord? { throw self.error }
    func passkeys(userId: String) async throws -> [PasskeyRecord] { throw self.error }
    func passkeys(aaguids: [String], attestationKeyIds: [String], limit: Int) async throws -> [PasskeyRecord] { throw self.error }
    func renamePasskey(id: String, userId: String, name: String?) async throws -> Bool { throw self.error }
    func deletePasskey(id: String, userId: String) async throws -> Bool { throw self.error }
    func recordPasskeyUse(id: String, signCount: Int64, backupEligible: Bool, backedUp: Bool, cloneWarning: Bool, at: Date) async throws {
        throw self.error
    }
    func insertWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord) async throws { throw self.error }
    func recordFailedPasskeyAssertion(id: String, threshold: Int64, at: Date) async throws -> Bool { throw self.error }
    func unlockPasskey(id: String, userId: String) async throws -> Bool { throw self.error }
    func recordAnsweredWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord, at: Date) async throws -> Bool { throw self.error }
    func completePasskeySignIn(
        challenge: WebAuthnChallengeRecord,
        passkeyId: String,
        signCount: Int64,
        backupEligible: Bool,
        backedUp: Bool,
        cloneWarning: Bool,
        session: SessionRecord,
        events: [AuditEventRecord],
        at: Date
    ) async throws -> Bool { throw self.error }
    func insertAppAttestKey(_ key: AppAttestKeyRecord) async throws { throw self.error }
    func appAttestKey(keyId: String) async throws -> AppAttestKeyRecord? { throw self.error }
    func advanceAppAttestCounter(keyId: String, from previous: Int64, to counter: Int64, at: Date) async throws -> Bool {
        throw self.error
    }
    func consumeWebAuthnChallenge(_ challenge: String, purpose: ChallengePurpose, at: Date) async throws
        -> WebAuthnChallengeRecord?
    { throw self.error }
    func setPin(registrationId: String, userId: String, pinHash: String, at: Date) async throws -> Bool { throw self.error }
    func removePin(registrationId: String, userId: String) async throws -> Bool { throw self.error }
    func beginPinAttempt(registrationId: String, maxAttempts: Int64) async throws -> PinAttempt { throw self.error }
    func recordWrongPin(registrationId: String, maxAttempts: Int64, at: Date) async throws -> Bool { throw self.error }
    func completePinSignIn(registrationId: String, session: SessionRecord, events: [AuditEventRecord], at: Date) async throws -> Bool {
        throw self.error
    }
    func reenablePins(userId: String) async throws -> [String] { throw self.error }
    func insertAuditEvent(_ event: AuditEventRecord) async throws { throw self.error }
    func auditEvents(_ query: AuditEventQuery) async throws -> [AuditEventRecord] { throw self.error }
    func deleteAuditEvents(before cutoff: Date) async throws -> Int { throw self.error }
    func takeRateLimitToken(key: String, capacity: Int64, interval: TimeInterval, at: Date) async throws -> TimeInterval? {
        throw self.error
    }
    func recordLoginFailure(key: String, window: TimeInterval, at: Date) async throws -> LoginFailures { throw self.error }
    func loginFailures(key: String) async throws -> LoginFailures? { throw self.error }
    func clearLoginFailures(key: String) async throws { throw self.error }
    func insertAdminKey(_ key: AdminKeyRecord) async throws { throw self.error }
    func adminKey(keyHash: String) async throws -> AdminKeyRecord? { throw self.error }
    func adminKeys() async throws -> [AdminKeyRecord] { throw self.error }
    func revokeAdminKey(id: String, at: Date) async throws -> Bool { throw self.error }
    func users(emailContaining: String?, afterId: String?, limit: Int) async throws -> [UserRecord] { throw self.error }
    func revokeSessions(userId: String, keeping: String?, at: Date) async throws -> Int { throw self.error }
    func updatePassword(userId: String, passwordHash: String?) async throws -> Bool { throw self.error }
    func lockUser(id: String) async throws -> Bool { throw self.error }
    func insertPendingSignUp(_ signUp: PendingSignUpRecord) async throws { throw self.error }
    func recordDPoPProof(thumbprint: String, jti: String, expiresAt: Date) async throws -> Bool { throw self.error }
    func insertDeferredWork(_ work: DeferredWorkRecord) async throws { throw self.error }
    func claimDeferredWork(now: Date, leaseUntil: Date, token: String, kinds: [String], limit: Int) async throws -> [DeferredWorkRecord] {
        throw self.error
    }
    func finishDeferredWork(id: String, token: String) async throws -> Bool { throw self.error }
    func postponeDeferredWork(id: String, token: String, until: Date) async throws { throw self.error }
    func deferredWorkBacklog() async throws -> (count: Int, oldest: Date?) { throw self.error }
    func consumePendingSignUp(id: String, kind: PendingSignUpRecord.Kind) async throws -> PendingSignUpRecord? { throw self.error }
    func credentials(userId: String) async throws -> CredentialSummary { throw self.error }
    func insertSetting(name: String, value: String, at: Date) async throws -> Bool { throw self.error }
    func setting(name: String) async throws -> String? { throw self.error }
    func saveSetting(name: String, value: String, at: Date) async throws { throw self.error }
    func metadataBLOB() async throws -> MetadataBLOBRecord? { throw self.error }
    func metadataBLOBNumber() async throws -> Int64? { throw self.error }
    func saveMetadataBLOB(_ record: MetadataBLOBRecord) async throws -> Bool { throw self.error }
}
