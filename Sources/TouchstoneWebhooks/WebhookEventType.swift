/// An event type a webhook endpoint can subscribe to, with what its `data` holds (listed by
/// `GET /v1/admin/webhooks/event-types` and docs/webhooks.md).
public struct WebhookEventType: Sendable, Hashable {
    public let name: String
    public let summary: String
    /// The fields of `data`, each with what it holds.
    public let data: [(field: String, meaning: String)]

    public static func == (lhs: WebhookEventType, rhs: WebhookEventType) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.name) }

    /// What an endpoint subscribes to when it names no type: every type.
    public static let everyType = "*"

    /// The test event: sent by `touchstone webhooks test` and `POST /v1/admin/webhooks/{id}/test` whatever the
    /// endpoint subscribes to; no endpoint subscribes to it.
    public static let test = WebhookEventType(
        name: "webhook.test",
        summary: "A test sent on request; no endpoint subscribes to it.",
        data: [("endpointId", "The endpoint the test was sent to.")]
    )

    private static let userId = ("userId", "The user's id.")
    private static let registrationId = ("registrationId", "The device-key registration's id.")
    private static let passkeyId = ("passkeyId", "The passkey's id.")

    /// Every type an endpoint may subscribe to.
    public static let all: [WebhookEventType] = [
        WebhookEventType(name: "user.created", summary: "An account was created (sign-up).", data: [Self.userId, ("email", "The account's email address.")]),
        WebhookEventType(name: "user.deleted", summary: "An account was deleted, with its sessions, devices and passkeys.", data: [Self.userId]),
        WebhookEventType(
            name: "session.created",
            summary: "A user signed in (a sign-up's first session too).",
            data: [
                Self.userId,
                ("method", "How: password, biometric, pin, passkey, email_code, recovery_code, phone_approval, or sign_up for a new account's first session."),
                ("registrationId", "The device-key registration used (biometric and pin), or null."),
                ("passkeyId", "The passkey used (passkey), or null."),
            ]
        ),
        WebhookEventType(name: "password.changed", summary: "A user changed their password.", data: [Self.userId]),
        WebhookEventType(name: "password.removed", summary: "A user removed their password (the account keeps a passkey or a device key).", data: [Self.userId]),
        WebhookEventType(
            name: "user.email_verified",
            summary: "A user proved the account's address is theirs (a mailed code or link).",
            data: [Self.userId, ("email", "The verified address.")]
        ),
        WebhookEventType(
            name: "password.reset_requested",
            summary: "A password reset was asked for an existing account (a code and link were mailed).",
            data: [Self.userId]
        ),
        WebhookEventType(
            name: "user.email_changed",
            summary: "A user changed the account's address, confirmed with a code or link mailed to the new one.",
            data: [Self.userId, ("email", "The new address (verified).")]
        ),
        WebhookEventType(
            name: "recovery_codes.generated",
            summary: "A user made new recovery codes (the previous ones stopped working).",
            data: [Self.userId]
        ),
        WebhookEventType(
            name: "password.reset",
            summary: "A password was reset with a mailed code or link; every session of the account was signed out.",
            data: [Self.userId]
        ),
        WebhookEventType(name: "device.enrolled", summary: "A device key was enrolled (biometric login on a new device).", data: [Self.userId, Self.registrationId]),
        WebhookEventType(
            name: "device.revoked",
            summary: "A device key was revoked by its user or an administrator, or replaced by a new enrolment of the same device.",
            data: [Self.userId, Self.registrationId]
        ),
        WebhookEventType(name: "device.locked", summary: "A device key was locked after repeated invalid signatures.", data: [Self.userId, Self.registrationId]),
        WebhookEventType(
            name: "device.invalidated",
            summary: "A device reported that its biometrics changed; its key no longer signs in.",
            data: [Self.userId, Self.registrationId]
        ),
        WebhookEventType(name: "passkey.registered", summary: "A passkey was registered.", data: [Self.userId, Self.passkeyId]),
        WebhookEventType(name: "passkey.deleted", summary: "A passkey was removed by its user or an administrator.", data: [Self.userId, Self.passkeyId]),
        WebhookEventType(
            name: "lockout.started",
            summary: "Repeated failures locked a credential: a device key, a passkey or a PIN.",
            data: [
                Self.userId,
                ("kind", "What was locked: device, passkey or pin."),
                ("registrationId", "The device-key registration (device, pin), or null."),
                ("passkeyId", "The passkey (passkey), or null."),
            ]
        ),
        WebhookEventType(
            name: "confirmation.approved",
            summary: "A user approved a transaction confirmation with a device key or passkey.",
            data: [Self.userId, ("confirmationId", "The confirmation's id.")]
        ),
        WebhookEventType(
            name: "confirmation.declined",
            summary: "A user declined a transaction confirmation.",
            data: [Self.userId, ("confirmationId", "The confirmation's id.")]
        ),
        WebhookEventType(
            name: "sign_in_request.created",
            summary: "Someone asked to sign in to an account by approving on its phone (a browser, or a client's backend through CIBA): "
                + "push to the registrations listed so the phone shows it.",
            data: [
                Self.userId,
                ("requestId", "The sign-in request's id."),
                ("kind", "sign_in (a browser; number matching) or backchannel (OpenID CIBA)."),
                ("client", "Who asks, as the phone shows it: the OpenID client's name or the product's."),
                ("registrationIds", "The account's active device-key registrations: the phones to notify."),
                ("expiresAt", "When the request expires (RFC 3339)."),
            ]
        ),
        WebhookEventType(
            name: "sign_in_request.approved",
            summary: "A user approved a sign-in request on their phone.",
            data: [Self.userId, Self.registrationId, ("requestId", "The sign-in request's id.")]
        ),
        WebhookEventType(
            name: "sign_in_request.declined",
            summary: "A sign-in request was declined on the phone: cancelled, or the wrong number was picked.",
            data: [Self.userId, Self.registrationId, ("requestId", "The sign-in request's id."), ("reason", "cancel or wrong_number.")]
        ),
        WebhookEventType(
            name: "sign_in_request.not_me",
            summary: "A user declined a sign-in request saying they did not ask for it: someone else may know how to start a sign-in "
                + "for this account.",
            data: [Self.userId, Self.registrationId, ("requestId", "The sign-in request's id.")]
        ),
        WebhookEventType(
            name: "signing_key.rotated",
            summary: "A new token-signing key was made (published now, signing from its activation).",
            data: [("kid", "The new key's id."), ("activatesAt", "When it starts signing (RFC 3339).")]
        ),
    ]

    /// The type called `name`, among ``all`` (not the test event).
    public static func named(_ name: String) -> WebhookEventType? { Self.all.first { $0.name == name } }

    /// Checks an endpoint's subscription: known type names, none twice; empty, or `*` among them, means every type.
    ///
    /// - Returns: the names, in the catalogue's order, or `["*"]` for every type.
    public static func subscription(_ names: [String]) throws(WebhookError) -> [String] {
        guard !names.isEmpty else { return [Self.everyType] }
        guard names.count <= Self.all.count + 1 else { throw .invalidEventType("at most \(Self.all.count) event types, each once") }
        var seen = Set<String>()
        for name in names {
            // What is echoed back is bounded and printable.
            let shown = name.unicodeScalars.prefix(60).filter { $0.value >= 0x20 && $0.value != 0x7f }.map(String.init).joined()
            guard seen.insert(name).inserted else { throw .invalidEventType("the event type '\(shown)' is named twice") }
            guard name == Self.everyType || Self.named(name) != nil else {
                throw .invalidEventType("unknown event type '\(shown)'; GET /v1/admin/webhooks/event-types lists them")
            }
        }
        // `*` among other names still means every type.
        return names.contains(Self.everyType) ? [Self.everyType] : Self.all.map(\.name).filter(seen.contains)
    }
}
