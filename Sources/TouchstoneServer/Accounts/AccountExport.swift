import Foundation
import Hummingbird
import TouchstoneConfirmation
import TouchstoneStore

/// `GET /v1/users/me/export` (issue #42, GDPR articles 15 and 20): one JSON document of everything Touchstone holds
/// about the user. Public metadata only — never a key's secret, a hash, a token, a code or a secret: device keys and
/// passkeys by name and dates, sessions without their tokens, sign-in requests without their poll tokens or secrets.
struct AccountExport: Encodable {
    struct User: Encodable {
        var id: String
        var email: String
        var emailVerified: Bool
        var emailVerifiedAt: String?
        var displayName: String?
        var createdAt: String
        var requireDeviceBoundPasskeys: Bool
    }

    struct Confirmation: Encodable {
        var confirmation: ConfirmationResource
        /// The exact text that was (or would be) signed.
        var payload: String
        /// What proves an approval (as `GET /v1/confirmations/{id}/evidence` answers it).
        var evidence: ConfirmationEvidence?
    }

    struct SignInRequest: Encodable {
        var id: String
        /// `sign_in` (a browser) or `backchannel` (an OpenID client's backend).
        var kind: String
        var client: String
        var bindingMessage: String?
        var browserAddress: String?
        var browserUserAgent: String?
        var createdAt: String
        var expiresAt: String
        var status: String
        var decidedAt: String?
        var registrationId: String?
        var reason: String?
    }

    var exportedAt: String
    var user: User
    var passkeys: [PasskeyResource]
    var devices: [RegistrationResource]
    var sessions: [SessionListController.SessionSummary]
    var consents: [GrantController.Grant]
    var confirmations: [Confirmation]
    var signInRequests: [SignInRequest]
    /// The user's audit trail, oldest first.
    var events: [AuditEventResource]

    /// The most of each list an export holds (far above any real account's; the audit trail is also kept for a
    /// limited time, `TOUCHSTONE_AUDIT_RETENTION_DAYS`).
    static let maximumItems = 10_000

    /// Reads everything of `identity`'s account.
    static func make(for identity: AuthenticatedSession, store: any TouchstoneStore, secrets: Secrets, now: Date) async throws -> AccountExport {
        let user = identity.user
        let confirmations = try await store.confirmations(userId: user.id, limit: Self.maximumItems).map { record in
            Confirmation(
                confirmation: ConfirmationResource(record, now: now),
                payload: record.payload,
                evidence: record.status == .approved ? ConfirmationEvidence(approved: record) : nil
            )
        }
        let requests = try await store.signInRequests(userId: user.id, limit: Self.maximumItems).map { request in
            SignInRequest(
                id: request.id, kind: request.kind.rawValue, client: request.clientName, bindingMessage: request.bindingMessage,
                browserAddress: request.browserAddress, browserUserAgent: request.browserUserAgent, createdAt: request.createdAt.rfc3339,
                expiresAt: request.expiresAt.rfc3339,
                status: request.status == .pending && request.expiresAt <= now ? "expired" : request.status.rawValue,
                decidedAt: request.decidedAt?.rfc3339, registrationId: request.registrationId, reason: request.reason)
        }
        var events: [AuditEventRecord] = []
        var query = AuditEventQuery(userId: user.id, limit: 1000, ascending: true)
        while events.count < Self.maximumItems {
            let page = try await store.auditEvents(query)
            events += page
            guard page.count == query.limit, let last = page.last else { break }
            query.after = AuditCursor(occurredAt: last.occurredAt, id: last.id)
        }
        return AccountExport(
            exportedAt: now.rfc3339,
            user: User(
                id: user.id, email: user.email, emailVerified: user.emailVerifiedAt != nil, emailVerifiedAt: user.emailVerifiedAt?.rfc3339,
                displayName: user.displayName, createdAt: user.createdAt.rfc3339, requireDeviceBoundPasskeys: user.requireDeviceBoundPasskeys),
            passkeys: try await store.passkeys(userId: user.id).map { PasskeyResource($0) },
            devices: try await store.registrations(userId: user.id).filter { $0.status != .pending }.map(RegistrationResource.init),
            sessions: try await SessionListController.summaries(of: identity, store: store, secrets: secrets, now: now),
            consents: try await GrantController.grants(of: user.id, store: store),
            confirmations: confirmations,
            signInRequests: requests,
            events: events.prefix(Self.maximumItems).map(AuditEventResource.init)
        )
    }
}
