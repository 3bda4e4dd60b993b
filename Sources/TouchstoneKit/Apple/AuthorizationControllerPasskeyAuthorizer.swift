#if canImport(AuthenticationServices)
public import AuthenticationServices
import Foundation

/// ``PasskeyAuthorizer`` with `ASAuthorizationController`: platform passkeys (iCloud Keychain, or the user's
/// password manager) and, optionally, hardware security keys. The app needs the Associated Domains entitlement
/// `webcredentials:<rpId>`, and the server serves `/.well-known/apple-app-site-association` (docs/ios.md).
@available(iOS 16.0, macOS 13.0, *)
public final class AuthorizationControllerPasskeyAuthorizer: PasskeyAuthorizer, @unchecked Sendable {
    /// The window the sheet is shown over.
    public typealias AnchorProvider = @MainActor @Sendable () -> ASPresentationAnchor

    let anchor: AnchorProvider
    let allowSecurityKeys: Bool

    /// - Parameters:
    ///   - allowSecurityKeys: Also offer hardware security keys (USB, NFC, Lightning).
    ///   - anchor: The window the sheet is shown over.
    public init(allowSecurityKeys: Bool = true, anchor: @escaping AnchorProvider) {
        self.allowSecurityKeys = allowSecurityKeys
        self.anchor = anchor
    }

    public func register(_ request: PasskeyRegistrationRequest) async throws -> PasskeyRegistrationResult {
        let platform = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: request.relyingPartyId)
            .createCredentialRegistrationRequest(challenge: Data(request.challenge), name: request.userName, userID: Data(request.userId))
        platform.displayName = request.userDisplayName
        platform.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: request.userVerification)
        platform.attestationPreference = ASAuthorizationPublicKeyCredentialAttestationKind(rawValue: request.attestation)
        var requests: [ASAuthorizationRequest] = [platform]
        if self.allowSecurityKeys {
            let securityKey = ASAuthorizationSecurityKeyPublicKeyCredentialProvider(relyingPartyIdentifier: request.relyingPartyId)
                .createCredentialRegistrationRequest(
                    challenge: Data(request.challenge),
                    displayName: request.userDisplayName,
                    name: request.userName,
                    userID: Data(request.userId)
                )
            securityKey.credentialParameters = request.algorithms.map {
                ASAuthorizationPublicKeyCredentialParameters(algorithm: ASCOSEAlgorithmIdentifier(rawValue: $0))
            }
            securityKey.excludedCredentials = Self.securityKeyDescriptors(request.excludeCredentials)
            securityKey.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: request.userVerification)
            securityKey.attestationPreference = ASAuthorizationPublicKeyCredentialAttestationKind(rawValue: request.attestation)
            requests.append(securityKey)
        }
        let credential = try await self.perform(requests, autoFill: false)
        if let platformCredential = credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration {
            guard let attestation = platformCredential.rawAttestationObject else {
                throw PasskeyError(.invalidResponse, "the passkey came without an attestation object")
            }
            return PasskeyRegistrationResult(
                credentialId: Array(platformCredential.credentialID),
                clientDataJSON: Array(platformCredential.rawClientDataJSON),
                attestationObject: Array(attestation),
                attachment: "platform",
                transports: ["internal", "hybrid"]
            )
        }
        if let keyCredential = credential as? ASAuthorizationSecurityKeyPublicKeyCredentialRegistration {
            guard let attestation = keyCredential.rawAttestationObject else {
                throw PasskeyError(.invalidResponse, "the security key answered without an attestation object")
            }
            return PasskeyRegistrationResult(
                credentialId: Array(keyCredential.credentialID),
                clientDataJSON: Array(keyCredential.rawClientDataJSON),
                attestationObject: Array(attestation),
                attachment: "cross-platform"
            )
        }
        throw PasskeyError(.invalidResponse, "an unexpected credential type: \(type(of: credential))")
    }

    public func assert(_ request: PasskeyAssertionRequest, mode: PasskeyAssertionMode) async throws -> PasskeyAssertionResult {
        let platform = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: request.relyingPartyId)
            .createCredentialAssertionRequest(challenge: Data(request.challenge))
        platform.allowedCredentials = request.allowCredentials.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: Data($0)) }
        platform.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: request.userVerification)
        var requests: [ASAuthorizationRequest] = [platform]
        // AutoFill offers platform passkeys only.
        if self.allowSecurityKeys && mode == .modal {
            let securityKey = ASAuthorizationSecurityKeyPublicKeyCredentialProvider(relyingPartyIdentifier: request.relyingPartyId)
                .createCredentialAssertionRequest(challenge: Data(request.challenge))
            securityKey.allowedCredentials = Self.securityKeyDescriptors(request.allowCredentials)
            securityKey.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: request.userVerification)
            requests.append(securityKey)
        }
        let credential = try await self.perform(requests, autoFill: mode == .autoFill)
        if let assertion = credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion {
            return PasskeyAssertionResult(
                credentialId: Array(assertion.credentialID),
                clientDataJSON: Array(assertion.rawClientDataJSON),
                authenticatorData: Array(assertion.rawAuthenticatorData),
                signature: Array(assertion.signature),
                userHandle: Array(assertion.userID),
                attachment: "platform"
            )
        }
        if let assertion = credential as? ASAuthorizationSecurityKeyPublicKeyCredentialAssertion {
            return PasskeyAssertionResult(
                credentialId: Array(assertion.credentialID),
                clientDataJSON: Array(assertion.rawClientDataJSON),
                authenticatorData: Array(assertion.rawAuthenticatorData),
                signature: Array(assertion.signature),
                userHandle: assertion.userID.isEmpty ? nil : Array(assertion.userID),
                attachment: "cross-platform"
            )
        }
        throw PasskeyError(.invalidResponse, "an unexpected credential type: \(type(of: credential))")
    }

    /// Credential ids as security-key descriptors, over every transport the device supports.
    private static func securityKeyDescriptors(_ ids: [[UInt8]]) -> [ASAuthorizationSecurityKeyPublicKeyCredentialDescriptor] {
        ids.map {
            ASAuthorizationSecurityKeyPublicKeyCredentialDescriptor(
                credentialID: Data($0),
                transports: ASAuthorizationSecurityKeyPublicKeyCredentialDescriptor.Transport.allSupported
            )
        }
    }

    /// Runs the controller and waits for its delegate; the task's cancellation cancels the sheet.
    @MainActor
    private func perform(_ requests: [ASAuthorizationRequest], autoFill: Bool) async throws -> any ASAuthorizationCredential {
        let controller = ASAuthorizationController(authorizationRequests: requests)
        let delegate = Delegate(anchor: self.anchor())
        controller.delegate = delegate
        controller.presentationContextProvider = delegate
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.continuation = continuation
                if autoFill {
                    #if os(iOS) || os(visionOS)
                    controller.performAutoFillAssistedRequests()
                    #else
                    controller.performRequests()
                    #endif
                } else {
                    controller.performRequests()
                }
            }
        } onCancel: { [box = ControllerBox(controller)] in
            Task { @MainActor in box.controller.cancel() }
        }
    }

    /// Carries the controller into the cancellation handler, which only hands it back to the main actor.
    private final class ControllerBox: @unchecked Sendable {
        let controller: ASAuthorizationController
        init(_ controller: ASAuthorizationController) { self.controller = controller }
    }

    /// Bridges the controller's delegate callbacks to one continuation and gives it the window.
    @MainActor
    // `@preconcurrency`: older SDKs do not mark these protocols as main-actor ones; the controller calls them on the
    // main thread.
    private final class Delegate: NSObject, @preconcurrency ASAuthorizationControllerDelegate,
        @preconcurrency ASAuthorizationControllerPresentationContextProviding
    {
        let anchor: ASPresentationAnchor
        var continuation: CheckedContinuation<any ASAuthorizationCredential, any Error>?

        init(anchor: ASPresentationAnchor) {
            self.anchor = anchor
        }

        func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor { self.anchor }

        func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
            self.continuation?.resume(returning: authorization.credential)
            self.continuation = nil
        }

        func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
            let nsError = error as NSError
            let mapped: PasskeyError =
                nsError.domain == ASAuthorizationError.errorDomain
                ? PlatformErrorMapping.passkeyError(forASAuthorizationErrorCode: nsError.code, message: nsError.localizedDescription)
                : PasskeyError(.unknown, nsError.localizedDescription)
            self.continuation?.resume(throwing: mapped)
            self.continuation = nil
        }
    }
}
#endif
