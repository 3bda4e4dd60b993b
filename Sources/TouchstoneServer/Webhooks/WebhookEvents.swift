import Foundation
import TouchstoneStore
import TouchstoneWebhooks

/// Which audit events the app's backend hears of, and what they say: the mapping from the audit trail to the webhook
/// catalogue (``WebhookEventType/all``). ``AuditLog/event(_:_:userId:registrationId:passkeyId:reason:webhookData:)``
/// attaches the result to the audit event, so that the store writes both in one transaction.
enum WebhookEvents {
    /// The webhook events of an audit event: none for most; `extra` adds fields the audit record does not carry
    /// (an email, a confirmation id, a key id).
    static func outbox(
        for record: AuditEventRecord,
        type: AuditEventType,
        outcome: AuditOutcome,
        extra: [String: WebhookValue],
        randomBytes: (Int) -> [UInt8],
        announcing: (String) -> Bool = { _ in true }
    ) -> [WebhookOutboxEvent] {
        // Most audit events announce nothing, or nothing anyone listens to: decided before anything is built.
        guard let names = Self.types[type], names.contains(where: announcing) else { return [] }
        if type == .passwordLogin || type == .biometricLogin || type == .pinLogin || type == .passkeyLogin || type == .emailCodeLogin
            || type == .recoveryCodeLogin || type == .phoneApprovalLogin, outcome != .success
        {
            return []
        }
        let user: [String: WebhookValue] = ["userId": record.userId.map(WebhookValue.string) ?? .null]
        let registration: [String: WebhookValue] = ["registrationId": record.registrationId.map(WebhookValue.string) ?? .null]
        let passkey: [String: WebhookValue] = ["passkeyId": record.passkeyId.map(WebhookValue.string) ?? .null]
        var events: [(String, [String: WebhookValue])] = []
        func session(_ method: String) {
            events.append(("session.created", user.merging(registration) { a, _ in a }.merging(passkey) { a, _ in a }.merging(["method": .string(method)]) { a, _ in a }))
        }
        switch type {
        case .userCreated: events.append(("user.created", user))
        case .userDeleted: events.append(("user.deleted", user))
        case .passwordLogin where outcome == .success: session("password")
        case .biometricLogin where outcome == .success: session("biometric")
        case .pinLogin where outcome == .success: session("pin")
        case .passkeyLogin where outcome == .success: session("passkey")
        case .emailCodeLogin where outcome == .success: session("email_code")
        case .recoveryCodeLogin where outcome == .success: session("recovery_code")
        case .phoneApprovalLogin where outcome == .success: session("phone_approval")
        case .signInRequestCreated: events.append(("sign_in_request.created", user))
        case .signInRequestApproved: events.append(("sign_in_request.approved", user.merging(registration) { a, _ in a }))
        case .signInRequestDeclined, .signInRequestWrongNumber:
            events.append(("sign_in_request.declined", user.merging(registration) { a, _ in a }))
        case .signInRequestNotMe: events.append(("sign_in_request.not_me", user.merging(registration) { a, _ in a }))
        case .recoveryCodesGenerated: events.append(("recovery_codes.generated", user))
        case .emailChanged: events.append(("user.email_changed", user))
        case .emailVerified: events.append(("user.email_verified", user))
        case .passwordResetRequested: events.append(("password.reset_requested", user))
        case .passwordReset: events.append(("password.reset", user))
        case .passwordChanged: events.append(("password.changed", user))
        case .passwordRemoved: events.append(("password.removed", user))
        case .registrationFinished: events.append(("device.enrolled", user.merging(registration) { a, _ in a }))
        case .registrationRevoked, .registrationReplaced: events.append(("device.revoked", user.merging(registration) { a, _ in a }))
        case .registrationLocked:
            events.append(("device.locked", user.merging(registration) { a, _ in a }))
            events.append(("lockout.started", user.merging(registration) { a, _ in a }.merging(["kind": .string("device"), "passkeyId": .null]) { a, _ in a }))
        case .registrationInvalidated: events.append(("device.invalidated", user.merging(registration) { a, _ in a }))
        case .passkeyAdded: events.append(("passkey.registered", user.merging(passkey) { a, _ in a }))
        case .passkeyRemoved: events.append(("passkey.deleted", user.merging(passkey) { a, _ in a }))
        case .passkeyLocked:
            events.append(("lockout.started", user.merging(passkey) { a, _ in a }.merging(["kind": .string("passkey"), "registrationId": .null]) { a, _ in a }))
        case .pinDisabled:
            events.append(("lockout.started", user.merging(registration) { a, _ in a }.merging(["kind": .string("pin"), "passkeyId": .null]) { a, _ in a }))
        case .confirmationApproved: events.append(("confirmation.approved", user))
        case .confirmationDeclined: events.append(("confirmation.declined", user))
        case .signingKeyRotated, .signingKeyCreated: events.append(("signing_key.rotated", [:]))
        default: break
        }
        return events.filter { announcing($0.0) }.map { name, data in
            Self.event(name, data: data.merging(extra) { _, new in new }, at: record.occurredAt, randomBytes: randomBytes)
        }
    }

    /// The webhook types each audit type can give (what ``outbox(for:type:outcome:extra:randomBytes:announcing:)``
    /// builds; a test checks the two agree).
    static let types: [AuditEventType: [String]] = [
        .userCreated: ["user.created"], .userDeleted: ["user.deleted"],
        .passwordLogin: ["session.created"], .biometricLogin: ["session.created"], .pinLogin: ["session.created"],
        .passkeyLogin: ["session.created"], .emailCodeLogin: ["session.created"], .recoveryCodeLogin: ["session.created"],
        .phoneApprovalLogin: ["session.created"], .signInRequestCreated: ["sign_in_request.created"],
        .signInRequestApproved: ["sign_in_request.approved"], .signInRequestDeclined: ["sign_in_request.declined"],
        .signInRequestWrongNumber: ["sign_in_request.declined"], .signInRequestNotMe: ["sign_in_request.not_me"],
        .recoveryCodesGenerated: ["recovery_codes.generated"], .emailChanged: ["user.email_changed"], .emailVerified: ["user.email_verified"],
        .passwordResetRequested: ["password.reset_requested"], .passwordReset: ["password.reset"], .passwordChanged: ["password.changed"], .passwordRemoved: ["password.removed"], .registrationFinished: ["device.enrolled"],
        .registrationRevoked: ["device.revoked"], .registrationReplaced: ["device.revoked"],
        .registrationLocked: ["device.locked", "lockout.started"], .registrationInvalidated: ["device.invalidated"],
        .passkeyAdded: ["passkey.registered"], .passkeyRemoved: ["passkey.deleted"], .passkeyLocked: ["lockout.started"],
        .pinDisabled: ["lockout.started"], .confirmationApproved: ["confirmation.approved"],
        .confirmationDeclined: ["confirmation.declined"], .signingKeyRotated: ["signing_key.rotated"],
        .signingKeyCreated: ["signing_key.rotated"],
    ]

    /// One outbox event of type `name`.
    static func event(_ name: String, data: [String: WebhookValue], at: Date, randomBytes: (Int) -> [UInt8]) -> WebhookOutboxEvent {
        let event = WebhookEvent(id: WebhookEvent.newId(randomBytes: randomBytes), type: name, timestamp: at, data: data)
        return WebhookOutboxEvent(id: event.id, type: name, payload: String(decoding: event.body(), as: UTF8.self), createdAt: at)
    }
}
