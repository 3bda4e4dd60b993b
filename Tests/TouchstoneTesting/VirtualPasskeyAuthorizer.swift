public import Foundation
import NIOConcurrencyHelpers
public import TouchstoneKit
public import TouchstoneWebAuthn

/// A passkey "device" for tests: the project's virtual authenticator behind the SDK's ``PasskeyAuthorizer``, with the
/// passkeys it made kept like a password manager keeps them, and the OS sheet's outcomes scripted.
///
/// Like iOS, it refuses to act for a relying party its app is not associated with (`associatedDomains`), and reports
/// the client data's origin as `https://<rpId>`.
public final class VirtualPasskeyAuthorizer: PasskeyAuthorizer, Sendable {
    /// What the next sheet does.
    public enum Outcome: Sendable {
        case approve
        case fail(PasskeyError.Code)
    }

    private struct State {
        var credentials: [VirtualAuthenticator.Credential] = []
        var outcomes: [Outcome] = []
        var modes: [PasskeyAssertionMode] = []
    }

    let authenticator: VirtualAuthenticator
    public let associatedDomains: Set<String>
    private let state = NIOLockedValueBox(State())

    public init(associatedDomains: Set<String>, authenticator: VirtualAuthenticator = VirtualAuthenticator()) {
        self.associatedDomains = associatedDomains
        self.authenticator = authenticator
    }

    public func enqueue(_ outcome: Outcome) { self.state.withLockedValue { $0.outcomes.append(outcome) } }

    /// The passkeys this device holds.
    public var credentials: [VirtualAuthenticator.Credential] { self.state.withLockedValue { $0.credentials } }
    /// How each assertion was asked for.
    public var modes: [PasskeyAssertionMode] { self.state.withLockedValue { $0.modes } }

    /// Forgets a passkey locally (as when the user deletes it from the password manager).
    public func remove(credentialId: [UInt8]) { self.state.withLockedValue { $0.credentials.removeAll { $0.id == credentialId } } }

    private func nextOutcome() throws {
        let outcome = self.state.withLockedValue { $0.outcomes.isEmpty ? Outcome.approve : $0.outcomes.removeFirst() }
        if case .fail(let code) = outcome { throw PasskeyError(code, "scripted \(code.rawValue)") }
    }

    private func checkAssociation(_ rpId: String) throws {
        guard self.associatedDomains.contains(rpId) else {
            throw PasskeyError(.failed, "the app is not associated with \(rpId) (webcredentials)")
        }
    }

    public func register(_ request: PasskeyRegistrationRequest) async throws -> PasskeyRegistrationResult {
        try self.checkAssociation(request.relyingPartyId)
        try self.nextOutcome()
        let held = self.credentials
        if held.contains(where: { credential in request.excludeCredentials.contains(credential.id) }) {
            throw PasskeyError(.matchedExcludedCredential, "this device already has a passkey for the account")
        }
        let registration = self.authenticator.register(
            rpId: request.relyingPartyId,
            origin: "https://\(request.relyingPartyId)",
            challenge: request.challenge,
            userHandle: request.userId,
            algorithm: request.algorithms.contains(COSEAlgorithm.es256.rawValue) ? .es256 : .eddsa
        )
        self.state.withLockedValue { $0.credentials.append(registration.credential) }
        return PasskeyRegistrationResult(
            credentialId: registration.credential.id,
            clientDataJSON: registration.clientDataJSON,
            attestationObject: registration.attestationObject,
            attachment: "platform",
            transports: ["internal", "hybrid"]
        )
    }

    public func assert(_ request: PasskeyAssertionRequest, mode: PasskeyAssertionMode) async throws -> PasskeyAssertionResult {
        try self.checkAssociation(request.relyingPartyId)
        self.state.withLockedValue { $0.modes.append(mode) }
        try self.nextOutcome()
        let candidates = self.credentials.filter { credential in
            credential.rpId == request.relyingPartyId && (request.allowCredentials.isEmpty || request.allowCredentials.contains(credential.id))
        }
        guard var credential = candidates.last else { throw PasskeyError(.noCredentials, "no passkey for \(request.relyingPartyId) on this device") }
        let assertion = self.authenticator.assert(&credential, origin: "https://\(request.relyingPartyId)", challenge: request.challenge)
        let updated = credential
        self.state.withLockedValue { state in
            if let index = state.credentials.firstIndex(where: { $0.id == updated.id }) { state.credentials[index] = updated }
        }
        return PasskeyAssertionResult(
            credentialId: assertion.credentialId,
            clientDataJSON: assertion.clientDataJSON,
            authenticatorData: assertion.authenticatorData,
            signature: assertion.signature,
            userHandle: assertion.userHandle,
            attachment: "platform"
        )
    }
}
