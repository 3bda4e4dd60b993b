/// The exact text a device signs to approve a confirmation: the JCS (RFC 8785) serialisation of
///
///     {"challenge", "confirmationId", "details", "expiresAt", "rpId", "summary", "userId", "version": 1}
///
/// `challenge` is base64url of 32 random bytes; `expiresAt` is RFC 3339 UTC to the second (`2026-11-23T21:50:52Z`).
/// The device signs its UTF-8 bytes; a passkey signs a WebAuthn assertion whose challenge is their SHA-256.
public struct ConfirmationPayload: Sendable, Hashable {
    public static let version = 1

    public var confirmationId: String
    public var challenge: String
    public var rpId: String
    public var userId: String
    public var summary: String
    public var details: [String: JSONValue]
    public var expiresAt: String

    public init(
        confirmationId: String,
        challenge: String,
        rpId: String,
        userId: String,
        summary: String,
        details: [String: JSONValue],
        expiresAt: String
    ) {
        self.confirmationId = confirmationId
        self.challenge = challenge
        self.rpId = rpId
        self.userId = userId
        self.summary = summary
        self.details = details
        self.expiresAt = expiresAt
    }

    public var json: JSONValue {
        .object([
            "challenge": .string(self.challenge),
            "confirmationId": .string(self.confirmationId),
            "details": .object(self.details),
            "expiresAt": .string(self.expiresAt),
            "rpId": .string(self.rpId),
            "summary": .string(self.summary),
            "userId": .string(self.userId),
            "version": .number(Double(Self.version)),
        ])
    }

    /// The canonical text.
    public var text: String { CanonicalJSON.string(self.json) }
    /// The bytes that are signed.
    public var bytes: [UInt8] { CanonicalJSON.serialize(self.json) }

    /// Reads a payload and checks that it is exactly the canonical form of a version 1 payload (so a device or a
    /// verifier never signs or trusts text that could be read two ways).
    public init(text: String) throws(JSONInputError) {
        let value = try StrictJSONParser(maximumDepth: 1 + ConfirmationText.maximumDetailsDepth).parse(Array(text.utf8))
        guard case .object(let members) = value, Set(members.keys) == Set(["challenge", "confirmationId", "details", "expiresAt", "rpId", "summary", "userId", "version"]),
            let confirmationId = members["confirmationId"]?.stringValue, let challenge = members["challenge"]?.stringValue,
            let rpId = members["rpId"]?.stringValue, let userId = members["userId"]?.stringValue,
            let summary = members["summary"]?.stringValue, let expiresAt = members["expiresAt"]?.stringValue,
            let details = members["details"], members["version"]?.numberValue == Double(Self.version)
        else {
            throw JSONInputError(path: "payload", reason: "is not a version 1 confirmation payload")
        }
        self.init(
            confirmationId: confirmationId,
            challenge: challenge,
            rpId: rpId,
            userId: userId,
            summary: try ConfirmationText.summary(summary, path: "payload.summary"),
            details: try ConfirmationText.details(details, path: "payload.details"),
            expiresAt: expiresAt
        )
        // Bytes, not String equality (which would take canonically equivalent text for the same).
        guard self.bytes == Array(text.utf8) else { throw JSONInputError(path: "payload", reason: "is not in canonical (RFC 8785) form") }
    }
}
