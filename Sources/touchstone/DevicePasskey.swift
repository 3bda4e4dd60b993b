import ArgumentParser
import Foundation
import TouchstoneKit
import TouchstoneWebAuthn

/// A simulated passkey authenticator: the virtual authenticator answering the server's real options.
extension Device {
    struct PasskeyRegister: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passkey-register",
            abstract: "Sign in with a password, then add a passkey held by this simulated device."
        )
        @OptionGroup var options: Options
        @Option(name: .long) var email: String
        @Option(name: .long, help: "The account password (or TOUCHSTONE_PASSWORD).") var password: String?
        @Option(name: .long, help: "The origin the simulated browser reports (default: the server URL's origin).")
        var origin: String?
        @Option(name: .long) var name: String = "Simulated passkey"

        func run() async throws {
            let client = try self.options.client()
            let origin = self.origin ?? self.options.serverOrigin
            try await printingErrors {
                let session = try await client.signIn(email: self.email, password: try resolvePassword(self.password))
                let creationOptions = try await client.passkeyRegistrationOptions(token: session.session.token)
                let (credential, response) = try VirtualAuthenticator().respond(toCreationOptions: Array(creationOptions), origin: origin)
                var named = try JSONSerialization.jsonObject(with: Data(response)) as? [String: Any] ?? [:]
                named["name"] = self.name
                let passkey = try await client.verifyPasskeyRegistration(
                    token: session.session.token,
                    responseJSON: try JSONSerialization.data(withJSONObject: named)
                )
                try PasskeyWallet(directory: self.options.stateDirectory).save(credential)
                try printJSON(["passkey": passkey])
            }
        }
    }

    struct PasskeyLogin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passkey-login",
            abstract: "Sign in with this simulated device's passkey (username-less unless --email is given)."
        )
        @OptionGroup var options: Options
        @Option(name: .long, help: "Ask for that account's passkeys only.") var email: String?
        @Option(name: .long, help: "The origin the simulated browser reports (default: the server URL's origin).")
        var origin: String?

        func run() async throws {
            let client = try self.options.client()
            let origin = self.origin ?? self.options.serverOrigin
            let wallet = try PasskeyWallet(directory: self.options.stateDirectory)
            try await printingErrors {
                guard var credential = try wallet.credentials().first else {
                    throw BiometricLoginError(.notEnabled, "this device holds no passkey; run passkey-register first")
                }
                let requestOptions = try await client.passkeyAuthenticationOptions(email: self.email)
                let response = try VirtualAuthenticator().respond(toRequestOptions: Array(requestOptions), credential: &credential, origin: origin)
                let session = try await client.verifyPasskeyAuthentication(responseJSON: Data(response))
                try wallet.save(credential)  // the counter moved
                try printJSON(session)
            }
        }
    }
}

/// Passkeys of the simulated device: one JSON file each (mode 0600) under `passkeys/` in the state directory.
struct PasskeyWallet {
    let directory: URL

    init(directory: URL) throws {
        self.directory = directory.appendingPathComponent("passkeys")
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    func save(_ credential: VirtualAuthenticator.Credential) throws {
        let name = credential.id.prefix(12).map { String(format: "%02x", $0) }.joined()
        let url = self.directory.appendingPathComponent("\(name).json")
        let data = try JSONEncoder().encode(credential)
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
        guard FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw ValidationError("cannot write \(url.path)")
        }
    }

    func credentials() throws -> [VirtualAuthenticator.Credential] {
        try FileManager.default.contentsOfDirectory(atPath: self.directory.path).sorted().filter { $0.hasSuffix(".json") }.map {
            try JSONDecoder().decode(VirtualAuthenticator.Credential.self, from: Data(contentsOf: self.directory.appendingPathComponent($0)))
        }
    }
}
