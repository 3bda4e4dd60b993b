// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    // https://github.com/apple/swift-evolution/blob/main/proposals/0335-existential-any.md
    .enableUpcomingFeature("ExistentialAny"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md
    .enableUpcomingFeature("MemberImportVisibility"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0409-access-level-on-imports.md
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "touchstone",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .visionOS(.v1)],
    products: [
        .library(name: "TouchstoneCrypto", targets: ["TouchstoneCrypto"]),
        .library(name: "TouchstoneDPoP", targets: ["TouchstoneDPoP"]),
        .library(name: "TouchstoneWebAuthn", targets: ["TouchstoneWebAuthn"]),
        .library(name: "TouchstoneStore", targets: ["TouchstoneStore"]),
        .library(name: "TouchstoneServer", targets: ["TouchstoneServer"]),
        .library(name: "TouchstoneKit", targets: ["TouchstoneKit"]),
        .library(name: "TouchstoneAuth", targets: ["TouchstoneAuth"]),
        .library(name: "TouchstoneConfirmation", targets: ["TouchstoneConfirmation"]),
        .library(name: "TouchstoneOpenID", targets: ["TouchstoneOpenID"]),
        .library(name: "TouchstoneWebhooks", targets: ["TouchstoneWebhooks"]),
        .library(name: "TouchstoneMail", targets: ["TouchstoneMail"]),
        .library(name: "TouchstoneAPNs", targets: ["TouchstoneAPNs"]),
        .executable(name: "touchstone", targets: ["touchstone"]),
        .executable(name: "touchstone-fuzz", targets: ["touchstone-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.27.0"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // OTLP/HTTP only: the gRPC exporter's dependencies are not built.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        // Pure key and signature parsing and verification. No I/O.
        .target(
            name: "TouchstoneCrypto",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // DPoP (RFC 9449): proofs, JWK thumbprints (RFC 7638), the jti replay cache. Used by the server and TouchstoneAuth.
        .target(
            name: "TouchstoneDPoP",
            dependencies: [
                "TouchstoneCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Pure WebAuthn verification: CBOR, authenticator data, COSE keys, attestation formats, assertions.
        .target(
            name: "TouchstoneWebAuthn",
            dependencies: [
                "TouchstoneCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        // Pure transaction confirmation: the canonical payload (RFC 8785), the rules for its text, and offline
        // verification of approval evidence (device key or passkey).
        .target(
            name: "TouchstoneConfirmation",
            dependencies: [
                "TouchstoneCrypto",
                "TouchstoneWebAuthn",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Pure OpenID Connect / OAuth 2.1 rules of the provider: redirect URIs (RFC 8252), PKCE (RFC 7636), scopes.
        // No I/O.
        .target(
            name: "TouchstoneOpenID",
            dependencies: [
                "TouchstoneCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Pure Standard Webhooks rules: signatures, secrets, the event catalogue and bodies, the retry schedule, and
        // which destinations a webhook may reach (SSRF). No I/O.
        .target(
            name: "TouchstoneWebhooks",
            dependencies: [
                "TouchstoneCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Mail: RFC 5322 messages with MIME parts, and a small SMTP client on SwiftNIO (STARTTLS, AUTH, pipelining).
        .target(
            name: "TouchstoneMail",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // Apple push: a provider-token (JWT, jwt-kit) client of the HTTP/2 push service on AsyncHTTPClient.
        .target(
            name: "TouchstoneAPNs",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // Persistence behind one Sendable protocol: embedded SQLite, or PostgreSQL to scale out.
        .target(
            name: "TouchstoneStore",
            dependencies: [
                "TouchstoneCrypto",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // The Hummingbird 2 application.
        .target(
            name: "TouchstoneServer",
            dependencies: [
                "TouchstoneCrypto",
                "TouchstoneDPoP",
                "TouchstoneStore",
                "TouchstoneWebAuthn",
                "TouchstoneAuth",
                "TouchstoneConfirmation",
                "TouchstoneOpenID",
                "TouchstoneWebhooks",
                "TouchstoneMail",
                "TouchstoneAPNs",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            resources: [.copy("Resources/openapi.json"), .copy("Resources/web"), .copy("Resources/oidc"), .copy("Resources/mail")],
            swiftSettings: swiftSettings
        ),
        // The client SDK: platform-neutral core plus thin platform adapters.
        .target(
            name: "TouchstoneKit",
            dependencies: [
                "TouchstoneCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // For an app's own API (a resource server): verifies Touchstone access tokens against the issuer's JWKS
        // (fetched with async-http-client, cached, refreshed on rotation) and a Hummingbird middleware that puts the
        // caller in the request context. Imported without the server.
        .target(
            name: "TouchstoneAuth",
            dependencies: [
                "TouchstoneDPoP",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        // Shared helpers for the test targets: a manual clock, a test server, an in-process SDK transport.
        .target(
            name: "TouchstoneTesting",
            dependencies: [
                "TouchstoneServer",
                "TouchstoneWebAuthn",
                "TouchstoneCrypto",
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                "TouchstoneKit",
                "TouchstoneStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Tests/TouchstoneTesting",
            swiftSettings: swiftSettings
        ),
        // The command-line tool: `serve`, `migrate`, `device ...`, `webauthn ...`, `bench ...`.
        .executableTarget(
            name: "touchstone",
            dependencies: [
                "TouchstoneServer",
                "TouchstoneOpenID",
                "TouchstoneWebhooks",
                "TouchstoneStore",
                "TouchstoneWebAuthn",
                "TouchstoneCrypto",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                "TouchstoneKit",
                "TouchstoneAuth",
                "TouchstoneDPoP",
                "TouchstoneConfirmation",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // libFuzzer targets for every parser of attacker-controlled bytes (scripts/fuzz.sh builds them with
        // -sanitize=fuzzer,address; a normal build replays a corpus).
        .target(name: "CFuzzDriver"),
        .executableTarget(
            name: "touchstone-fuzz",
            dependencies: [
                "TouchstoneCrypto",
                "TouchstoneDPoP",
                "TouchstoneWebAuthn",
                "CFuzzDriver",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneDPoPTests",
            dependencies: [
                "TouchstoneDPoP",
                "TouchstoneCrypto",
                "TouchstoneTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneCryptoTests",
            dependencies: [
                "TouchstoneCrypto",
                "TouchstoneTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneWebAuthnTests",
            dependencies: [
                "TouchstoneWebAuthn",
                "TouchstoneTesting",
                "TouchstoneCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneStoreTests",
            dependencies: [
                "TouchstoneStore",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneServerTests",
            dependencies: [
                "TouchstoneTesting",
                "TouchstoneAuth",
                "TouchstoneConfirmation",
                "TouchstoneWebhooks",
                "TouchstoneMail",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                "TouchstoneWebAuthn",
                "TouchstoneServer",
                "TouchstoneStore",
                "TouchstoneCrypto",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneKitTests",
            dependencies: [
                "TouchstoneTesting",
                "TouchstoneConfirmation",
                "TouchstoneWebAuthn",
                "TouchstoneKit",
                "TouchstoneServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneOpenIDTests",
            dependencies: ["TouchstoneOpenID"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneWebhooksTests",
            dependencies: ["TouchstoneWebhooks", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneAPNsTests",
            dependencies: [
                "TouchstoneAPNs",
                "TouchstoneTesting",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneMailTests",
            dependencies: [
                "TouchstoneMail",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneConfirmationTests",
            dependencies: [
                "TouchstoneConfirmation",
                "TouchstoneCrypto",
                "TouchstoneWebAuthn",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TouchstoneAuthTests",
            dependencies: [
                "TouchstoneAuth",
                "TouchstoneDPoP",
                "TouchstoneTesting",
                "TouchstoneServer",
                "TouchstoneKit",
                "TouchstoneCrypto",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Runs the built `touchstone` binary as an operator would: several instances, database outages.
        .testTarget(
            name: "TouchstoneCLITests",
            dependencies: [
                "TouchstoneKit",
                "TouchstoneAuth",
                "TouchstoneWebAuthn",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                "TouchstoneStore",
                "TouchstoneCrypto",
                "TouchstoneTesting",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
