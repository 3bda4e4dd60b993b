public import ArgumentParser
import Foundation
public import TouchstoneCrypto
import TouchstoneKit
import TouchstoneWebAuthn

extension SignatureAlgorithm: ExpressibleByArgument {}

/// A simulated phone: the real SDK with the software key store and an always-approving prompt.
struct Device: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A simulated device driven by the real SDK (software keys, auto-approved prompt). Prints JSON.",
        subcommands: [
            Enable.self, Login.self, Disable.self, Status.self, Confirm.self, PasskeyRegister.self, PasskeyLogin.self, SignInRequests.self,
            ApproveSignIn.self, DeclineSignIn.self,
        ]
    )

    struct Options: ParsableArguments {
        @Option(name: .long, help: "The Touchstone server, e.g. http://127.0.0.1:8080.")
        var server: String

        @Option(name: .long, help: "Directory holding this device's keys and state (created, mode 0700).")
        var state: String = ".touchstone-device"

        @Option(name: .long, help: "Key algorithm: ES256, EdDSA or RS256.")
        var algorithm: SignatureAlgorithm = .es256

        var stateDirectory: URL { URL(fileURLWithPath: self.state, isDirectory: true) }

        /// The server URL's origin (`scheme://host[:port]`), what a browser on that page would report.
        var serverOrigin: String {
            guard let components = URLComponents(string: self.server), let scheme = components.scheme, let host = components.host else {
                return self.server
            }
            return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
        }

        func client() throws -> TouchstoneClient {
            guard let url = URL(string: self.server), url.scheme == "http" || url.scheme == "https" else {
                throw ValidationError("--server must be an http(s) URL")
            }
            return TouchstoneClient(baseURL: url)
        }

        func makeLogin() throws -> BiometricLogin {
            let directory = self.stateDirectory
            return BiometricLogin(
                client: try self.client(),
                keyStore: try SoftwareKeyStore(directory: directory.appendingPathComponent("keys")),
                verifier: ScriptedVerifier.alwaysApprove(),
                stateStore: try FileStateStore(directory: directory),
                algorithm: self.algorithm
            )
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign in with a password, then enable biometric login.",
            discussion: "With --sign-up --no-password the account is created with the device key alone (no password)."
        )
        @OptionGroup var options: Options
        @Option(name: .long) var email: String
        @Option(name: .long, help: "The account password (prefer TOUCHSTONE_PASSWORD to keep it out of shell history).")
        var password: String?
        @Option(name: .customLong("device-name")) var deviceName: String = "Simulated device"
        @Flag(name: .long, help: "Create the account first.") var signUp = false
        @Flag(name: .customLong("no-password"), help: "With --sign-up: create the account with the device key, no password.")
        var noPassword = false

        func validate() throws {
            if self.noPassword && !self.signUp { throw ValidationError("--no-password needs --sign-up") }
            if self.noPassword && self.password != nil { throw ValidationError("--no-password takes no --password") }
        }

        func run() async throws {
            let login = try self.options.makeLogin()
            if self.noPassword {
                try await printingErrors {
                    let session = try await login.signUp(email: self.email, deviceName: self.deviceName)
                    guard let registration = try await login.client.registrations(token: session.session.token).first else {
                        throw BiometricLoginError(.internalFailure, "the new account has no registration")
                    }
                    try printJSON(["registration": registration])
                }
                return
            }
            let password = try resolvePassword(self.password)
            try await printingErrors {
                let session =
                    self.signUp
                    ? try await login.client.createUser(email: self.email, password: password)
                    : try await login.client.signIn(email: self.email, password: password)
                let registration = try await login.enable(session: session, deviceName: self.deviceName)
                try printJSON(["registration": registration])
            }
        }
    }

    struct Login: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Sign in with the device key.")
        @OptionGroup var options: Options

        func run() async throws {
            let login = try self.options.makeLogin()
            try await printingErrors {
                try printJSON(try await login.login(reason: "Sign in"))
            }
        }
    }

    struct Confirm: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Approve a transaction confirmation with the device key.",
            discussion: """
                Signs in with the device key to read the confirmation (or takes --payload and --summary as the app \
                would), checks the payload, shows its summary in the (simulated) prompt, signs it, and prints the \
                approved confirmation and its receipt.
                """
        )
        @OptionGroup var options: Options
        @Argument(help: "The confirmation id.") var id: String
        @Option(name: .long, help: "The payload to sign, as the app got it (skips reading the confirmation).") var payload: String?
        @Option(name: .long, help: "The summary the app shows (with --payload).") var summary: String?

        func run() async throws {
            let login = try self.options.makeLogin()
            try await printingErrors {
                let request: ConfirmationRequest
                if let payload = self.payload {
                    guard let summary = self.summary else { throw ValidationError("--payload needs --summary") }
                    request = ConfirmationRequest(id: self.id, summary: summary, payload: payload)
                } else {
                    let session = try await login.login(reason: "Read the confirmation")
                    request = try await login.client.confirmationRequest(id: self.id, token: session.session.token).1
                }
                try printJSON(try await login.confirm(request, promptPrefix: "Approve: "))
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete the registration on the server, then the local key and ids.",
            discussion: "Authenticates with --email/--password if given, otherwise with the device key itself."
        )
        @OptionGroup var options: Options
        @Option(name: .long) var email: String?
        @Option(name: .long) var password: String?

        func run() async throws {
            let login = try self.options.makeLogin()
            try await printingErrors {
                let session =
                    if let email = self.email {
                        try await login.client.signIn(email: email, password: try resolvePassword(self.password))
                    } else {
                        try await login.login(reason: "Disable biometric sign-in")
                    }
                try await login.disable(session: session)
                try printJSON(["status": "disabled"])
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the local enrolment and what the server allows.")
        @OptionGroup var options: Options

        struct Output: Encodable {
            var enabled: Bool
            var enrollment: LocalEnrollment?
            var server: ServerConfiguration?
            var serverError: String?
        }

        func run() async throws {
            let login = try self.options.makeLogin()
            var output = Output(enabled: false)
            if case .enabled(let enrollment) = try await login.status() {
                output.enabled = true
                output.enrollment = enrollment
            }
            do {
                output.server = try await login.client.configuration()
            } catch {
                output.serverError = "\(error)"
            }
            try printJSON(output)
        }
    }
}

func resolvePassword(_ option: String?) throws -> String {
    if let option { return option }
    if let environment = ProcessInfo.processInfo.environment["TOUCHSTONE_PASSWORD"] { return environment }
    throw ValidationError("give --password or set TOUCHSTONE_PASSWORD")
}

func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// Prints SDK errors as `{"error":{"code","message"}}` and exits 1.
func printingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as BiometricLoginError {
        try printJSON(["error": ["code": error.serverCode ?? error.code.rawValue, "message": error.message]])
        throw ExitCode.failure
    } catch let error as VirtualAuthenticator.OptionsError {
        try printJSON(["error": ["code": "authenticator_refused", "message": error.description]])
        throw ExitCode.failure
    }
}
