import AuthenticationServices
import Foundation
import Observation
import TouchstoneKit
import UIKit

/// Everything the screen needs: password sign-in, enabling biometrics, biometric sign-in, disabling, and a message for
/// every error the SDK can report.
@MainActor
@Observable
final class SignInModel {
    enum Screen: Equatable {
        case signedOut(offerBiometrics: Bool)
        case signedIn(email: String)
    }

    var screen: Screen = .signedOut(offerBiometrics: false)
    var message: String?
    var biometricsEnabled = false
    var biometryName = "Face ID"
    var busy = false
    /// Sign-ins on a computer waiting for this phone's approval (number matching).
    var signInRequests: [SignInRequest] = []

    private let biometrics: BiometricLogin
    private let passkeys: PasskeyLogin
    private var session: TouchstoneSession?
    private var autoFill: Task<Void, Never>?

    init(serverURL: URL) {
        let stateDirectory = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
            .appendingPathComponent("touchstone", isDirectory: true)
        let client = TouchstoneClient(baseURL: serverURL)
        // Passkeys need the Associated Domains entitlement webcredentials:<the server's domain> (docs/ios.md).
        self.passkeys = PasskeyLogin(client: client, authorizer: AuthorizationControllerPasskeyAuthorizer { Self.keyWindow() })
        self.biometrics = BiometricLogin(
            client: client,
            keyStore: SecureEnclaveKeyStore(),
            verifier: LocalAuthenticationVerifier(fallbackTitle: "Use Password"),
            stateStore: try! FileStateStore(directory: stateDirectory),
            algorithm: .es256,
            accessPolicy: .biometryCurrentSet,
            appAttest: DeviceCheckAppAttestProvider(),
            // Read when a push arrives, without a prompt: this device only, after the first unlock.
            credentialStore: KeychainDeviceCredentialStore()
        )
        Task { await self.refresh() }
    }

    /// Never prompts: local state and availability only.
    func refresh() async {
        let status = try? await self.biometrics.status()
        if case .enabled? = status { self.biometricsEnabled = true } else { self.biometricsEnabled = false }
        if case .available(let kind)? = try? await self.biometrics.availability() {
            self.biometryName = kind == .touchID ? "Touch ID" : kind == .opticID ? "Optic ID" : "Face ID"
        }
        if case .signedOut = self.screen { self.screen = .signedOut(offerBiometrics: self.biometricsEnabled) }
    }

    func signIn(email: String, password: String) async {
        await self.run {
            let session = try await self.biometrics.client.signIn(email: email, password: password)
            self.session = session
            self.screen = .signedIn(email: session.user.email)
        }
    }

    func signInWithBiometrics() async {
        await self.run {
            let session = try await self.biometrics.login(reason: "Sign in to Touchstone Demo")
            self.session = session
            self.screen = .signedIn(email: session.user.email)
        }
    }

    func signInWithPasskey() async {
        self.autoFill?.cancel()
        await self.run {
            let session = try await self.passkeys.signIn()
            self.session = session
            self.screen = .signedIn(email: session.user.email)
        }
    }

    /// Offers passkeys in the email field's keyboard suggestions while the sign-in screen is shown.
    func startPasskeyAutoFill() {
        self.autoFill?.cancel()
        self.autoFill = Task {
            do {
                let session = try await self.passkeys.signInWithAutoFill()
                self.session = session
                self.screen = .signedIn(email: session.user.email)
            } catch let error as PasskeyError where error.code != .cancelled {
                self.message = error.message
            } catch {}
        }
    }

    /// Right after a password sign-in, like enabling Face ID.
    func addPasskey() async {
        guard let session else { return }
        await self.run {
            _ = try await self.passkeys.register(session: session, name: "Demo iPhone")
            self.message = "Passkey added."
        }
    }

    static func keyWindow() -> ASPresentationAnchor {
        let scenes = UIApplication.shared.connectedScenes.compactMap { $0 as? UIWindowScene }
        return scenes.compactMap(\.keyWindow).first ?? ASPresentationAnchor()
    }

    /// Right after a password sign-in (the server wants a password within the last ten minutes).
    func enableBiometrics() async {
        guard let session else { return }
        await self.run {
            try await self.biometrics.enable(session: session, deviceName: "Demo iPhone", reason: "Turn on \(self.biometryName) sign-in")
            self.message = "\(self.biometryName) sign-in is on."
        }
    }

    func disableBiometrics() async {
        guard let session else { return }
        await self.run {
            try await self.biometrics.disable(session: session)
            self.message = "\(self.biometryName) sign-in is off."
        }
    }

    /// Calls the app's own API with an access token from the session (cached by the SDK until shortly before it
    /// expires). The API verifies it with TouchstoneAuth's middleware or any JWT library and the server's JWKS.
    func loadProfile(api: URL = URL(string: "https://api.example.com/me")!) async {
        guard let session else { return }
        await self.run {
            var request = URLRequest(url: api)
            let token = try await self.biometrics.client.accessToken(for: session)
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (data, response) = try await URLSession.shared.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            self.message = status == 200 ? String(decoding: data, as: UTF8.self) : "The API answered \(status)."
        }
    }

    // MARK: Sign-ins on a computer, approved here

    /// Reads the requests waiting for this phone (no prompt: the device credential). Call it when a push arrives
    /// (its `requestId`) and when the app comes to the foreground.
    func loadSignInRequests() async {
        await self.run { self.signInRequests = try await self.biometrics.pendingSignInRequests() }
    }

    /// The user picked `number` among the three shown: Face ID, then the device key signs the request and the choice.
    func approve(_ request: SignInRequest, number: Int?) async {
        await self.run {
            try await self.biometrics.approveSignIn(request, choice: number)
            self.message = "You signed in to \(request.client) on your computer."
        }
        await self.loadSignInRequests()
    }

    /// "It wasn't me" (reported to the app's backend) or a plain cancel.
    func decline(_ request: SignInRequest, notMe: Bool) async {
        await self.run {
            try await self.biometrics.declineSignIn(request, reason: notMe ? .notMe : .cancel)
            self.message = notMe ? "Thanks: that sign-in was refused and reported." : "Sign-in declined."
        }
        await self.loadSignInRequests()
    }

    /// From `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`.
    func registerPushToken(_ token: Data) async {
        try? await self.biometrics.registerPushToken(token)
    }

    func signOut() async {
        if let session { try? await self.biometrics.client.signOut(token: session.session.token) }
        self.session = nil
        self.screen = .signedOut(offerBiometrics: self.biometricsEnabled)
    }

    private func run(_ body: () async throws -> Void) async {
        self.busy = true
        self.message = nil
        defer { self.busy = false }
        do {
            try await body()
        } catch let error as BiometricLoginError {
            self.message = self.text(for: error)
        } catch let error as PasskeyError {
            self.message = error.code == .cancelled ? nil : error.message
        } catch {
            self.message = error.localizedDescription
        }
        await self.refresh()
    }

    /// One sentence per SDK error code.
    private func text(for error: BiometricLoginError) -> String? {
        switch error.code {
        case .userCancelled: return nil  // the user chose to; say nothing
        case .userFallback: return "Sign in with your password."
        case .lockedOut: return "\(self.biometryName) is locked. Unlock your iPhone with its passcode, or sign in with your password."
        case .notAvailable: return "This device cannot use \(self.biometryName) sign-in."
        case .notEnrolled: return "Set up \(self.biometryName) in Settings first."
        case .passcodeNotSet: return "Set a device passcode in Settings first."
        case .notEnabled: return "\(self.biometryName) sign-in is not on for this device. Sign in with your password."
        case .enabledForAnotherAccount: return "\(self.biometryName) sign-in on this device belongs to another account."
        case .registrationRevoked: return "\(self.biometryName) sign-in was turned off for this device. Sign in with your password."
        case .keyInvalidated: return "Your \(self.biometryName) changed. Sign in with your password, then turn it on again."
        case .registrationLocked: return "Too many failed attempts locked \(self.biometryName) sign-in. Sign in with your password to unlock it."
        case .pinIncorrect: return "That PIN is not right."
        case .pinDisabled: return "Too many wrong PINs. Sign in with your password."
        case .pinNotSet: return "No PIN is set for this device. Sign in with your password."
        case .rateLimited: return "Too many attempts. Wait a moment and try again."
        case .sessionEnded: return "You were signed out. Sign in again."
        case .confirmationMismatch: return "This request does not match what was shown. Nothing was signed."
        case .confirmationExpired: return "This request has expired."
        case .confirmationNotPending: return "This request was already answered."
        case .signInRequestMismatch: return "This sign-in request does not match this phone's account. Nothing was signed."
        case .signInRequestExpired: return "This sign-in request has expired. Start again on your computer."
        case .signInRequestNotPending: return "This sign-in request was already answered."
        case .wrongNumber: return "That is not the number on your computer, so the sign-in was refused. Start again on your computer."
        case .deviceCredentialInvalid: return "Sign in with your password to receive sign-in requests on this phone again."
        case .server:
            if error.serverCode == "reauthentication_required" { return "Sign in with your password again to change this." }
            if error.serverCode == "app_attest_required" { return "This app could not prove it is genuine (App Attest)." }
            return error.message
        case .transport: return "The server cannot be reached. Check your connection."
        case .internalFailure: return "Something went wrong: \(error.message)"
        }
    }
}
