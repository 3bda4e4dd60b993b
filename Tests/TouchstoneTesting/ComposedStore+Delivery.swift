public import Foundation
public import TouchstoneStore

// The aggregates of the OpenID provider, webhooks, mail, recovery and phone approval (ComposedStore.swift has the rest).
extension ComposedStore {
    // MARK: OAuthClientStore

    public func insertClient(_ client: OAuthClientRecord) async throws {
        try await self.clientStore.insertClient(client)
    }
    public func client(id: String) async throws -> OAuthClientRecord? {
        try await self.clientStore.client(id: id)
    }
    public func clients() async throws -> [OAuthClientRecord] {
        try await self.clientStore.clients()
    }
    public func deleteClient(id: String) async throws -> Bool {
        try await self.clientStore.deleteClient(id: id)
    }
    public func rotateClientSecret(id: String, secretHash: String, at: Date) async throws -> Bool {
        try await self.clientStore.rotateClientSecret(id: id, secretHash: secretHash, at: at)
    }

    // MARK: AuthorizationStore

    public func insertAuthorizationCode(_ code: AuthorizationCodeRecord) async throws {
        try await self.authorizations.insertAuthorizationCode(code)
    }
    public func redeemAuthorizationCode(codeHash: String, at: Date) async throws -> AuthorizationCodeRedemption {
        try await self.authorizations.redeemAuthorizationCode(codeHash: codeHash, at: at)
    }
    public func insertTokenFamily(_ family: TokenFamilyRecord) async throws {
        try await self.authorizations.insertTokenFamily(family)
    }
    public func tokenFamily(id: String) async throws -> TokenFamilyRecord? {
        try await self.authorizations.tokenFamily(id: id)
    }
    public func revokeTokenFamily(id: String, at: Date) async throws -> Bool {
        try await self.authorizations.revokeTokenFamily(id: id, at: at)
    }
    public func revokeTokenFamilies(userId: String, clientId: String, at: Date) async throws -> Int {
        try await self.authorizations.revokeTokenFamilies(userId: userId, clientId: clientId, at: at)
    }
    public func insertRefreshToken(_ token: RefreshTokenRecord) async throws {
        try await self.authorizations.insertRefreshToken(token)
    }
    public func useRefreshToken(tokenHash: String, at: Date) async throws -> RefreshTokenUse {
        try await self.authorizations.useRefreshToken(tokenHash: tokenHash, at: at)
    }
    public func refreshToken(tokenHash: String) async throws -> RefreshTokenRecord? {
        try await self.authorizations.refreshToken(tokenHash: tokenHash)
    }
    public func revokeAccessToken(jti: String, expiresAt: Date) async throws {
        try await self.authorizations.revokeAccessToken(jti: jti, expiresAt: expiresAt)
    }
    public func isAccessTokenRevoked(jti: String) async throws -> Bool {
        try await self.authorizations.isAccessTokenRevoked(jti: jti)
    }
    public func consent(userId: String, clientId: String) async throws -> OAuthConsentRecord? {
        try await self.authorizations.consent(userId: userId, clientId: clientId)
    }
    public func upsertConsent(_ consent: OAuthConsentRecord) async throws {
        try await self.authorizations.upsertConsent(consent)
    }
    public func consents(userId: String) async throws -> [OAuthConsentRecord] {
        try await self.authorizations.consents(userId: userId)
    }
    public func openIDClientNames(sessionIds: [String]) async throws -> [String: [String]] {
        try await self.authorizations.openIDClientNames(sessionIds: sessionIds)
    }

    public func deleteConsent(userId: String, clientId: String) async throws -> Bool {
        try await self.authorizations.deleteConsent(userId: userId, clientId: clientId)
    }
    public func dueLogoutNotices(now: Date, limit: Int) async throws -> [LogoutNoticeRecord] {
        try await self.authorizations.dueLogoutNotices(now: now, limit: limit)
    }
    public func recordLogoutNotice(clientId: String, sessionId: String, delivered: Bool, retryAt: Date?, error: String?) async throws {
        try await self.authorizations.recordLogoutNotice(clientId: clientId, sessionId: sessionId, delivered: delivered, retryAt: retryAt, error: error)
    }

    // MARK: WebhookStore

    public func insertWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws {
        try await self.webhooks.insertWebhookEndpoint(endpoint)
    }
    public func webhookEndpoint(id: String) async throws -> WebhookEndpointRecord? {
        try await self.webhooks.webhookEndpoint(id: id)
    }
    public func webhookEndpoints() async throws -> [WebhookEndpointRecord] {
        try await self.webhooks.webhookEndpoints()
    }
    public func updateWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws -> Bool {
        try await self.webhooks.updateWebhookEndpoint(endpoint)
    }
    public func deleteWebhookEndpoint(id: String) async throws -> Bool {
        try await self.webhooks.deleteWebhookEndpoint(id: id)
    }
    public func rotateWebhookSecret(id: String, sealedSecret: [UInt8], previousExpiresAt: Date, at: Date) async throws -> Bool {
        try await self.webhooks.rotateWebhookSecret(id: id, sealedSecret: sealedSecret, previousExpiresAt: previousExpiresAt, at: at)
    }
    public func enqueueWebhookTest(endpointId: String, event: WebhookOutboxEvent) async throws -> Bool {
        try await self.webhooks.enqueueWebhookTest(endpointId: endpointId, event: event)
    }
    public func dueWebhookEndpoints(now: Date, limit: Int) async throws -> [String] {
        try await self.webhooks.dueWebhookEndpoints(now: now, limit: limit)
    }
    public func claimWebhookMessages(endpointId: String, now: Date, leaseUntil: Date, token: String, limit: Int) async throws -> [WebhookMessageRecord] {
        try await self.webhooks.claimWebhookMessages(endpointId: endpointId, now: now, leaseUntil: leaseUntil, token: token, limit: limit)
    }
    public func finishWebhookAttempt(_ attempt: WebhookAttemptRecord, token: String, outcome: WebhookAttemptOutcome) async throws -> Bool {
        try await self.webhooks.finishWebhookAttempt(attempt, token: token, outcome: outcome)
    }
    public func disableFailingWebhookEndpoint(id: String, since: Date, reason: String, at: Date) async throws -> Bool {
        try await self.webhooks.disableFailingWebhookEndpoint(id: id, since: since, reason: reason, at: at)
    }
    public func webhookDeliveries(endpointId: String, limit: Int) async throws -> [(WebhookMessageRecord, [WebhookAttemptRecord])] {
        try await self.webhooks.webhookDeliveries(endpointId: endpointId, limit: limit)
    }
    public func retryWebhookMessage(endpointId: String, eventId: String, at: Date) async throws -> Bool {
        try await self.webhooks.retryWebhookMessage(endpointId: endpointId, eventId: eventId, at: at)
    }
    public func webhookSubscribedTypes() async throws -> Set<String> {
        try await self.webhooks.webhookSubscribedTypes()
    }
    public func webhookQueueStatistics() async throws -> WebhookQueueStatistics {
        try await self.webhooks.webhookQueueStatistics()
    }
    public func purgeWebhookMessages(before cutoff: Date) async throws -> Int {
        try await self.webhooks.purgeWebhookMessages(before: cutoff)
    }

    public func deleteUser(id: String, at: Date) async throws -> Bool {
        try await self.users.deleteUser(id: id, at: at)
    }

    // MARK: MailQueueStore

    public func enqueueMail(_ mail: QueuedMailRecord) async throws {
        try await self.mailQueue.enqueueMail(mail)
    }

    public func claimDueMail(now: Date, leaseUntil: Date, token: String, limit: Int) async throws -> [QueuedMailRecord] {
        try await self.mailQueue.claimDueMail(now: now, leaseUntil: leaseUntil, token: token, limit: limit)
    }

    public func finishMailAttempt(id: String, token: String, outcome: MailAttemptOutcome) async throws -> Bool {
        try await self.mailQueue.finishMailAttempt(id: id, token: token, outcome: outcome)
    }

    public func mailQueueStatistics() async throws -> MailQueueStatistics {
        try await self.mailQueue.mailQueueStatistics()
    }

    public func purgeFailedMail(before cutoff: Date) async throws -> Int {
        try await self.mailQueue.purgeFailedMail(before: cutoff)
    }

    // MARK: RecoveryStore

    public func replaceEmailChallenge(_ challenge: EmailChallengeRecord) async throws {
        try await self.recovery.replaceEmailChallenge(challenge)
    }

    public func emailChallenge(userId: String, purpose: EmailChallengePurpose) async throws -> EmailChallengeRecord? {
        try await self.recovery.emailChallenge(userId: userId, purpose: purpose)
    }

    public func emailChallenge(tokenHash: String) async throws -> EmailChallengeRecord? {
        try await self.recovery.emailChallenge(tokenHash: tokenHash)
    }

    public func consumeEmailChallenge(userId: String, purpose: EmailChallengePurpose, codeHash: String, at: Date) async throws -> EmailChallengeRecord? {
        try await self.recovery.consumeEmailChallenge(userId: userId, purpose: purpose, codeHash: codeHash, at: at)
    }

    public func recordEmailChallengeFailure(userId: String, purpose: EmailChallengePurpose, codeHash: String, limit: Int) async throws -> Int? {
        try await self.recovery.recordEmailChallengeFailure(userId: userId, purpose: purpose, codeHash: codeHash, limit: limit)
    }

    public func deleteEmailChallenge(userId: String, purpose: EmailChallengePurpose) async throws {
        try await self.recovery.deleteEmailChallenge(userId: userId, purpose: purpose)
    }

    public func markEmailVerified(userId: String, email: String, at: Date) async throws -> Bool {
        try await self.recovery.markEmailVerified(userId: userId, email: email, at: at)
    }

    public func changeEmail(userId: String, to email: String, at: Date) async throws -> Bool {
        try await self.recovery.changeEmail(userId: userId, to: email, at: at)
    }

    public func replaceRecoveryCodes(userId: String, codeHashes: [String], at: Date) async throws {
        try await self.recovery.replaceRecoveryCodes(userId: userId, codeHashes: codeHashes, at: at)
    }

    public func useRecoveryCode(userId: String, codeHash: String, at: Date) async throws -> Bool {
        try await self.recovery.useRecoveryCode(userId: userId, codeHash: codeHash, at: at)
    }

    public func unusedRecoveryCodeCount(userId: String) async throws -> Int {
        try await self.recovery.unusedRecoveryCodeCount(userId: userId)
    }

    // MARK: PhoneApprovalStore

    public func insertSignInRequest(_ request: SignInRequestRecord, maximumPending: Int, events: [AuditEventRecord], at: Date) async throws -> Bool {
        try await self.phoneApproval.insertSignInRequest(request, maximumPending: maximumPending, events: events, at: at)
    }

    public func signInRequest(id: String) async throws -> SignInRequestRecord? {
        try await self.phoneApproval.signInRequest(id: id)
    }

    public func signInRequests(userId: String, limit: Int) async throws -> [SignInRequestRecord] {
        try await self.phoneApproval.signInRequests(userId: userId, limit: limit)
    }

    public func signInRequest(pollTokenHash: String) async throws -> SignInRequestRecord? {
        try await self.phoneApproval.signInRequest(pollTokenHash: pollTokenHash)
    }

    public func pendingSignInRequests(userId: String, at: Date) async throws -> [SignInRequestRecord] {
        try await self.phoneApproval.pendingSignInRequests(userId: userId, at: at)
    }

    public func bindSignInRequest(id: String, userId: String, at: Date) async throws -> Bool {
        try await self.phoneApproval.bindSignInRequest(id: id, userId: userId, at: at)
    }

    public func decideSignInRequest(id: String, decision: SignInRequestDecision, events: [AuditEventRecord], at: Date) async throws -> Bool {
        try await self.phoneApproval.decideSignInRequest(id: id, decision: decision, events: events, at: at)
    }

    public func redeemSignInRequest(id: String, at: Date) async throws -> Bool {
        try await self.phoneApproval.redeemSignInRequest(id: id, at: at)
    }

    public func recordSignInRequestPoll(id: String, interval: TimeInterval, at: Date) async throws -> Bool {
        try await self.phoneApproval.recordSignInRequestPoll(id: id, interval: interval, at: at)
    }

    public func setDeviceCredential(registrationId: String, credentialHash: String, at: Date) async throws {
        try await self.phoneApproval.setDeviceCredential(registrationId: registrationId, credentialHash: credentialHash, at: at)
    }

    public func deviceChannel(registrationId: String) async throws -> DeviceChannelRecord? {
        try await self.phoneApproval.deviceChannel(registrationId: registrationId)
    }

    public func deviceChannels(userId: String) async throws -> [DeviceChannelRecord] {
        try await self.phoneApproval.deviceChannels(userId: userId)
    }

    public func setPushToken(registrationId: String, platform: String, token: String, at: Date) async throws -> Bool {
        try await self.phoneApproval.setPushToken(registrationId: registrationId, platform: platform, token: token, at: at)
    }

    public func clearPushToken(registrationId: String, token: String) async throws {
        try await self.phoneApproval.clearPushToken(registrationId: registrationId, token: token)
    }

    public func pausePhoneApprovals(userId: String, until: Date) async throws {
        try await self.phoneApproval.pausePhoneApprovals(userId: userId, until: until)
    }

    public func phoneApprovalsPausedUntil(userId: String, at: Date) async throws -> Date? {
        try await self.phoneApproval.phoneApprovalsPausedUntil(userId: userId, at: at)
    }
}
