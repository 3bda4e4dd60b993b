import ArgumentParser
import AsyncHTTPClient
import Foundation
import TouchstoneAuth
import TouchstoneServer

/// `touchstone keys list|rotate`: the key set that signs access tokens.
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The token-signing key set (published at /.well-known/jwks.json).",
        subcommands: [List.self, Rotate.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the signing keys, newest first, with their state.")

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let keys = try await withStore(database: self.database) { store, configuration, logger in
                try await SigningKeys.list(configuration: configuration, store: store, logger: logger)
            }
            for key in keys {
                var line = "\(key.kid)  \(key.algorithm)  generation \(key.generation)  \(key.status)  signs from \(key.activatesAt)"
                if let retired = key.retiredAt { line += "  retired \(retired)" }
                print(line + (key.published ? "  published" : ""))
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new signing key: published now, signing after the publication lead time (or at once).",
            discussion: """
                Uses the server's configuration (TOUCHSTONE_KEY_ENCRYPTION_KEY, TOUCHSTONE_TOKEN_ALGORITHM, \
                TOUCHSTONE_SIGNING_KEY_LEAD_SECONDS). Recorded in the audit trail as signing_key.rotated. Running \
                servers pick the key up within 10 s.
                """
        )

        @Flag(name: .long, help: "Sign with the new key at once (when the current key must stop signing now).")
        var immediately = false

        @Option(name: .long, help: "sqlite:PATH or postgres://... (TOUCHSTONE_DATABASE_URL).")
        var database: String?

        func run() async throws {
            let key = try await withStore(database: self.database) { store, configuration, logger in
                try await SigningKeys.rotate(immediately: self.immediately, actor: "cli", configuration: configuration, store: store, logger: logger)
            }
            print("\(key.kid)  \(key.algorithm)  generation \(key.generation)  \(key.status)  signs from \(key.activatesAt)")
        }
    }
}

/// `touchstone token inspect`: what an access token says, and with `--issuer` whether it verifies.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Look at access tokens.", subcommands: [Inspect.self])

    struct Inspect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a token's header and claims; with --issuer, check its signature and claims against the issuer's JWKS.",
            discussion: "Exits 1 when a check was asked for and failed, printing the failing step's code and why."
        )

        @Argument(help: "The access token (a JWT).")
        var token: String

        @Option(name: .long, help: "The issuer URL: its /.well-known/jwks.json is fetched and the signature, typ, iss and exp checked.")
        var issuer: String?

        @Option(name: .long, help: "Also require this audience (repeatable).")
        var audience: [String] = []

        @Option(name: .customLong("jwks-url"), help: "Fetch the keys from here instead of <issuer>/.well-known/jwks.json.")
        var jwksURL: String?

        struct Output: Encodable {
            var header: TokenHeader
            var claims: AccessTokenClaims?
            var verification: Verification?
        }

        struct Verification: Encodable {
            var verified: Bool
            var code: String?
            var reason: String?
        }

        func run() async throws {
            let header: TokenHeader
            do {
                header = try SignedToken.header(of: self.token)
            } catch {
                throw ValidationError("not a JWT: \(error.reason)")
            }
            var output = Output(header: header, claims: try? SignedToken.unverifiedPayload(of: self.token, as: AccessTokenClaims.self))
            if let issuer = self.issuer {
                let fetcher = HTTPJWKSFetcher(url: self.jwksURL ?? HTTPJWKSFetcher.jwksURL(issuer: issuer))
                let verifier = AccessTokenVerifier(
                    keys: JWKSCache(fetcher: fetcher),
                    issuer: issuer,
                    audiences: self.audience.isEmpty ? nil : self.audience
                )
                do {
                    output.claims = try await verifier.verify(self.token)
                    output.verification = Verification(verified: true)
                } catch {
                    output.verification = Verification(verified: false, code: error.code.rawValue, reason: error.reason)
                }
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(output), as: UTF8.self))
            if output.verification?.verified == false { throw ExitCode(1) }
        }
    }
}
