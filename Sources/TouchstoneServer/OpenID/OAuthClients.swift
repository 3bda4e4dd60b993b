public import Foundation
import Logging
import TouchstoneOpenID
public import TouchstoneStore

/// The OpenID provider's clients (issue #31, §1): registered with validated redirect URIs, a confidential client's
/// secret generated here, shown once and stored only as its SHA-256 hash; every change audited in the same
/// transaction. The CLI (`touchstone clients ...`) uses these; the admin API will too.
public enum OAuthClients {
    /// Every client secret begins with this, so a leaked one is easy to spot in logs and code search.
    public static let secretPrefix = "tsc_"

    /// What a client asks to be registered with.
    public struct Registration: Sendable {
        public var name: String
        public var redirectURIs: [String]
        public var postLogoutRedirectURIs: [String] = []
        public var backchannelLogoutURI: String?
        /// A public client (a native or single-page app) gets no secret and authenticates with PKCE alone.
        public var isPublic = false
        /// A first-party client skips the consent page.
        public var firstParty = false
        /// May start phone approvals from its backend (OpenID CIBA, poll mode); such a client needs no redirect URI.
        public var ciba = false
        /// Gets tokens only with a DPoP proof, so every access token it holds is bound to its key (RFC 9449 §5.2).
        public var dpopBoundAccessTokens = false

        public init(name: String, redirectURIs: [String]) {
            self.name = name
            self.redirectURIs = redirectURIs
        }
    }

    /// A client as registered, and its secret (confidential clients only), to show once.
    public struct Created: Sendable {
        public var record: OAuthClientRecord
        public var secret: String?
    }

    /// A registration that cannot be accepted: the message says which value and why (the CLI prints it; the admin
    /// API answers it with 400).
    public struct InvalidRegistration: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Checks a registration: a name shown to people (1–200 characters, no control characters), 1–20 redirect URIs and
    /// up to 20 post-logout URIs that ``RedirectURI`` accepts, a back-channel logout URI over https (http on loopback).
    static func validate(_ registration: Registration) throws(InvalidRegistration) {
        do throws(FieldError) {
            _ = try InputRules.displayText(registration.name, field: "name", maxLength: 200)
        } catch {
            throw InvalidRegistration(description: error.message)
        }
        guard (1...20).contains(registration.redirectURIs.count) || (registration.ciba && registration.redirectURIs.isEmpty) else {
            throw InvalidRegistration(description: "a client needs 1 to 20 redirect URIs (--redirect-uri); only a CIBA client may have none")
        }
        guard !(registration.ciba && registration.isPublic) else {
            throw InvalidRegistration(description: "a CIBA client authenticates at the backchannel endpoint, so it cannot be public")
        }
        guard registration.postLogoutRedirectURIs.count <= 20 else {
            throw InvalidRegistration(description: "a client may have at most 20 post-logout redirect URIs")
        }
        for (field, uris) in [("redirect URI", registration.redirectURIs), ("post-logout redirect URI", registration.postLogoutRedirectURIs)] {
            for uri in uris {
                do throws(OpenIDError) {
                    _ = try RedirectURI(validating: uri)
                } catch {
                    throw InvalidRegistration(description: "invalid \(field): \(error.reason)")
                }
            }
        }
        if let uri = registration.backchannelLogoutURI {
            // Posted to by the server: https, or http on loopback; never a native app's scheme.
            let scheme = uri.prefix(while: { $0 != ":" }).lowercased()
            let accepted = (scheme == "https" || scheme == "http") && (try? RedirectURI(validating: uri)) != nil
            guard accepted else {
                throw InvalidRegistration(description: "invalid back-channel logout URI '\(uri)': use https (http only on a loopback host)")
            }
        }
    }

    /// Registers a client: validated, its id and (for a confidential client) its secret made here, stored with its
    /// `oauth_client.created` audit event in one transaction.
    public static func create(
        _ registration: Registration,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies = .live,
        actor: String = "cli"
    ) async throws -> Created {
        try await Self.create(registration, store: store, dependencies: dependencies, audit: Self.audit(store, dependencies), actor: actor)
    }

    /// ``create(_:store:dependencies:actor:)`` with the server's audit log, whose metrics count the event.
    static func create(
        _ registration: Registration,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies,
        audit: AuditLog,
        actor: String
    ) async throws -> Created {
        try Self.validate(registration)
        let secrets = Secrets(randomBytes: dependencies.randomBytes)
        let secret = registration.isPublic ? nil : Self.secretPrefix + secrets.newToken()
        var record = OAuthClientRecord(
            id: secrets.newIdentifier(),
            name: registration.name,
            secretHash: secret.map { Secrets.hash(token: $0) },
            redirectURIs: registration.redirectURIs,
            postLogoutRedirectURIs: registration.postLogoutRedirectURIs,
            backchannelLogoutURI: registration.backchannelLogoutURI,
            firstParty: registration.firstParty,
            createdAt: dependencies.now()
        )
        record.ciba = registration.ciba
        record.dpopBoundAccessTokens = registration.dpopBoundAccessTokens
        let stored = record
        let event = audit.event(.clientCreated, reason: "\(actor): client \(record.id)")
        try await store.unitOfWork { tx in
            try await tx.insertClient(stored)
            try await tx.insertAuditEvent(event)
        }
        audit.committed([event])
        return Created(record: stored, secret: secret)
    }

    /// Gives a confidential client a new secret (the old one stops working at once); nil when there is no
    /// confidential client with this id (a public client has no secret).
    public static func rotateSecret(
        id: String,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies = .live,
        actor: String = "cli"
    ) async throws -> String? {
        try await Self.rotateSecret(id: id, store: store, dependencies: dependencies, audit: Self.audit(store, dependencies), actor: actor)
    }

    static func rotateSecret(
        id: String,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies,
        audit: AuditLog,
        actor: String
    ) async throws -> String? {
        let secrets = Secrets(randomBytes: dependencies.randomBytes)
        let secret = Self.secretPrefix + secrets.newToken()
        let now = dependencies.now()
        let event = audit.event(.clientSecretRotated, reason: "\(actor): client \(id)")
        let rotated = try await store.unitOfWork { tx in
            guard try await tx.rotateClientSecret(id: id, secretHash: Secrets.hash(token: secret), at: now) else { return false }
            try await tx.insertAuditEvent(event)
            return true
        }
        guard rotated else { return nil }
        audit.committed([event])
        return secret
    }

    /// Deletes a client; false when there is none with this id.
    public static func delete(
        id: String,
        store: any TouchstoneStore,
        dependencies: TouchstoneDependencies = .live,
        actor: String = "cli"
    ) async throws -> Bool {
        try await Self.delete(id: id, store: store, audit: Self.audit(store, dependencies), actor: actor)
    }

    static func delete(id: String, store: any TouchstoneStore, audit: AuditLog, actor: String) async throws -> Bool {
        let event = audit.event(.clientDeleted, reason: "\(actor): client \(id)")
        let deleted = try await store.unitOfWork { tx in
            guard try await tx.deleteClient(id: id) else { return false }
            try await tx.insertAuditEvent(event)
            return true
        }
        if deleted { audit.committed([event]) }
        return deleted
    }

    /// The CLI's audit log: no metrics (the process is not a server).
    private static func audit(_ store: any TouchstoneStore, _ dependencies: TouchstoneDependencies) -> AuditLog {
        AuditLog(store: store, secrets: Secrets(randomBytes: dependencies.randomBytes), now: dependencies.now, logger: Logger(label: "touchstone"))
    }
}
