import Foundation
import TouchstoneStore
import TouchstoneWebhooks

/// What every sign-up commits (a password's, a passkey's, a device key's): the account, its first credential, its
/// first session, `user.created` with the `session.created` webhook (method `sign_up`), the sign-up's other events and
/// the verification mail, in one unit of work, or nothing.
struct NewAccount: Sendable {
    let store: any TouchstoneStore
    let audit: AuditLog
    /// Mails the new account's verification code and link (issue #33).
    let recovery: RecoveryService

    /// - Parameters:
    ///   - how: The `user.created` event's reason (nil for a password sign-up; `passkey`, `device_key`).
    ///   - credential: Stores the account's credential in the unit of work (after the user).
    ///   - conflict: The error for a unique constraint the unit hit (the address, or the credential).
    func commit(
        user: UserRecord,
        session: SessionRecord,
        how: String?,
        registrationId: String? = nil,
        passkeyId: String? = nil,
        events more: [AuditEventRecord] = [],
        credential: @escaping @Sendable (any TouchstoneStore) async throws -> Void = { _ in },
        conflict: () async throws -> APIError = { APIError.emailTaken }
    ) async throws {
        var created = self.audit.event(.userCreated, userId: user.id, reason: how, webhookData: ["email": .string(user.email)])
        if let opened = self.audit.webhook(
            "session.created",
            data: [
                "userId": .string(user.id), "method": .string("sign_up"), "registrationId": registrationId.map { .string($0) } ?? .null,
                "passkeyId": passkeyId.map { .string($0) } ?? .null,
            ]
        ) {
            created.webhooks.append(opened)
        }
        let events = [created] + more
        let verification = try await self.recovery.signUpVerification(for: user)
        do {
            try await self.store.unitOfWork { tx in
                try await tx.insertUser(user)
                try await credential(tx)
                try await tx.insertSession(session)
                for event in events { try await tx.insertAuditEvent(event) }
                if let (challenge, mail) = verification {
                    try await tx.replaceEmailChallenge(challenge)
                    try await tx.enqueueMail(mail)
                }
            }
        } catch let error as StoreError where error == .conflict {
            throw try await conflict()
        }
        self.audit.committed(events)
        if verification != nil { self.recovery.mailer.committed() }
    }
}
