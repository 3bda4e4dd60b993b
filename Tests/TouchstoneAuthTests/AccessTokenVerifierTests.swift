import Crypto
import Foundation
import JWTKit
import Testing
import TouchstoneAuth
import TouchstoneTesting

/// An issuer made in the test: its keys, its JWKS, and tokens signed as it would (or as a forger would).
struct TestIssuer: Sendable {
    static let url = "https://auth.example.test"
    static let audience = "https://api.example.test"

    let kid: String
    let privateKey: ES256PrivateKey
    let signer = JWTKeyCollection()

    init(kid: String = "es-key-1") async {
        self.kid = kid
        self.privateKey = ES256PrivateKey()
        await self.signer.add(ecdsa: self.privateKey, kid: JWKIdentifier(string: kid))
    }

    var publicJWK: PublicJWK {
        let parameters = self.privateKey.publicKey.parameters!
        return PublicJWK(kty: "EC", crv: "P-256", x: parameters.x, y: parameters.y, kid: self.kid, alg: "ES256")
    }

    var jwks: Data { try! JSONEncoder().encode(PublicJWKSet(keys: [self.publicJWK])) }

    func keys() async throws -> StaticKeySet { StaticKeySet([try await VerificationKey(jwk: self.publicJWK)]) }

    static func claims(
        now: Date,
        issuer: String = TestIssuer.url,
        audience: [String] = [TestIssuer.audience],
        lifetime: Int64 = 300,
        notBefore: Int64? = nil
    ) -> AccessTokenClaims {
        let iat = Int64(now.timeIntervalSince1970)
        return AccessTokenClaims(
            issuer: issuer,
            subject: "user-1",
            audience: audience,
            expiresAt: iat + lifetime,
            issuedAt: iat,
            notBefore: notBefore,
            tokenId: UUID().uuidString,
            clientId: "example-ios",
            sessionId: "session-1",
            authenticatedAt: iat - 60,
            methods: ["hwk", "user"]
        )
    }

    func sign(_ claims: AccessTokenClaims, type: String? = "at+jwt", kid: String? = nil) async throws -> String {
        var header = JWTHeader()
        header.typ = type
        return try await self.signer.sign(claims, kid: JWKIdentifier(string: kid ?? self.kid), header: header)
    }

    /// The classic confusion: HS256 with the public key (as PEM) as the HMAC secret, under the real kid.
    func hs256WithPublicKey(_ claims: AccessTokenClaims) async throws -> String {
        let forger = JWTKeyCollection()
        await forger.add(hmac: HMACKey(from: self.privateKey.publicKey.pemRepresentation), digestAlgorithm: .sha256, kid: JWKIdentifier(string: self.kid))
        var header = JWTHeader()
        header.typ = "at+jwt"
        return try await forger.sign(claims, kid: JWKIdentifier(string: self.kid), header: header)
    }

    /// An unsecured token (`alg: none`, empty signature).
    func unsecured(_ claims: AccessTokenClaims) throws -> String {
        let header = #"{"alg":"none","typ":"at+jwt","kid":"\#(self.kid)"}"#
        return Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(try JSONEncoder().encode(claims)) + "."
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

struct AccessTokenVerifierTests {
    static func verifier(_ issuer: TestIssuer, clock: ManualClock, leeway: TimeInterval = 30) async throws -> AccessTokenVerifier {
        AccessTokenVerifier(keys: try await issuer.keys(), issuer: TestIssuer.url, audiences: [TestIssuer.audience], leeway: leeway, now: { clock.now })
    }

    static func code(_ verifier: AccessTokenVerifier, _ token: String) async -> TokenVerificationError.Code? {
        do {
            _ = try await verifier.verify(token)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func aGoodTokenVerifies() async throws {
        let clock = ManualClock()
        let issuer = await TestIssuer()
        let token = try await issuer.sign(TestIssuer.claims(now: clock.now))
        let claims = try await Self.verifier(issuer, clock: clock).verify(token)
        #expect(claims.subject == "user-1")
        let caller = TouchstoneCaller(claims: claims)
        #expect(caller.signedInWithDeviceKeyOrPasskey)
        #expect(!caller.signedInWithPassword)
        #expect(caller.authenticated(within: 60, now: clock.now))
        #expect(!caller.authenticated(within: 59, now: clock.now))
    }

    @Test func eachRefusalHasItsCode() async throws {
        let clock = ManualClock()
        let issuer = await TestIssuer()
        let verifier = try await Self.verifier(issuer, clock: clock)
        let now = clock.now
        let good = try await issuer.sign(TestIssuer.claims(now: now))
        let parts = good.split(separator: ".").map(String.init)
        var otherClaims = TestIssuer.claims(now: now)
        otherClaims.subject = "admin"
        let otherPayload = TestIssuer.base64URL(try JSONEncoder().encode(otherClaims))
        let stranger = await TestIssuer()

        let cases: [(String, String, TokenVerificationError.Code)] = [
            ("tampered payload", parts[0] + "." + otherPayload + "." + parts[2], .invalidSignature),
            ("signed by another key under the same kid", try await stranger.sign(TestIssuer.claims(now: now), kid: issuer.kid), .invalidSignature),
            ("alg none", try issuer.unsecured(TestIssuer.claims(now: now)), .unsupportedAlgorithm),
            ("HS256 with the public key", try await issuer.hs256WithPublicKey(TestIssuer.claims(now: now)), .unsupportedAlgorithm),
            ("unknown kid", try await issuer.sign(TestIssuer.claims(now: now), kid: "not-a-kid"), .unknownKey),
            ("typ JWT", try await issuer.sign(TestIssuer.claims(now: now), type: "JWT"), .wrongType),
            ("no typ", try await issuer.sign(TestIssuer.claims(now: now), type: nil), .wrongType),
            ("wrong issuer", try await issuer.sign(TestIssuer.claims(now: now, issuer: "https://evil.example")), .wrongIssuer),
            ("wrong audience", try await issuer.sign(TestIssuer.claims(now: now, audience: ["https://other.example"])), .wrongAudience),
            ("expired", try await issuer.sign(TestIssuer.claims(now: now.addingTimeInterval(-331), lifetime: 300)), .expired),
            ("not yet valid", try await issuer.sign(TestIssuer.claims(now: now, notBefore: Int64(now.timeIntervalSince1970) + 31)), .notYetValid),
            ("issued in the future", try await issuer.sign(TestIssuer.claims(now: now.addingTimeInterval(31))), .notYetValid),
            ("not a JWT", "hello", .malformed),
            ("garbage header", "!!!." + parts[1] + "." + parts[2], .malformed),
        ]
        for (name, token, expected) in cases {
            #expect(await Self.code(verifier, token) == expected, "\(name)")
        }
    }

    @Test func theLeewayForgivesSmallClockDifferences() async throws {
        let clock = ManualClock()
        let issuer = await TestIssuer()
        let verifier = try await Self.verifier(issuer, clock: clock)
        let now = clock.now
        // Expired 29 s ago, issued 29 s ahead: both within 30 s.
        #expect(await Self.code(verifier, try await issuer.sign(TestIssuer.claims(now: now.addingTimeInterval(-329)))) == nil)
        #expect(await Self.code(verifier, try await issuer.sign(TestIssuer.claims(now: now.addingTimeInterval(29)))) == nil)
    }

    @Test func theAlgorithmComesFromTheKeyNotTheToken() async throws {
        let clock = ManualClock()
        // An EdDSA key published under a kid; a token naming ES256 for that kid is refused before any signature check.
        let eddsa = Curve25519.Signing.PrivateKey()
        let jwk = PublicJWK(
            kty: "OKP",
            crv: "Ed25519",
            x: TestIssuer.base64URL(eddsa.publicKey.rawRepresentation),
            kid: "ed-key",
            alg: "EdDSA"
        )
        let verifier = AccessTokenVerifier(
            keys: StaticKeySet([try await VerificationKey(jwk: jwk)]),
            issuer: TestIssuer.url,
            audiences: [TestIssuer.audience],
            now: { clock.now }
        )
        let es = await TestIssuer(kid: "ed-key")
        #expect(await Self.code(verifier, try await es.sign(TestIssuer.claims(now: clock.now))) == .algorithmMismatch)
        // The real EdDSA key verifies.
        let signer = JWTKeyCollection()
        await signer.add(eddsa: EdDSA.PrivateKey(backing: eddsa), kid: "ed-key")
        var header = JWTHeader()
        header.typ = "at+jwt"
        let token = try await signer.sign(TestIssuer.claims(now: clock.now), kid: "ed-key", header: header)
        #expect(await Self.code(verifier, token) == nil)
    }

    @Test func aSingleAudienceStringIsReadAsAList() throws {
        let json = #"{"iss":"i","sub":"s","aud":"https://api.example.test","exp":2,"iat":1,"jti":"j","client_id":"c","sid":"d","auth_time":1,"amr":["pwd"]}"#
        #expect(try JSONDecoder().decode(AccessTokenClaims.self, from: Data(json.utf8)).audience == ["https://api.example.test"])
    }

    @Test func aJWKWithoutKidOrForEncryptionIsRefused() async throws {
        let issuer = await TestIssuer()
        var noKid = issuer.publicJWK
        noKid.kid = nil
        var encryption = issuer.publicJWK
        encryption.use = "enc"
        for jwk in [noKid, encryption] {
            do {
                _ = try await VerificationKey(jwk: jwk)
                Issue.record("accepted \(jwk)")
            } catch {
                #expect(error.code == .malformed)
            }
        }
    }

    @Test func keySetsKeepOnlyUsableSigningKeys() async throws {
        let issuer = await TestIssuer()
        var encryption = issuer.publicJWK
        encryption.kid = "enc"
        encryption.use = "enc"
        var mismatched = issuer.publicJWK
        mismatched.kid = "mismatch"
        mismatched.alg = "EdDSA"
        let rsa = PublicJWK(kty: "RSA", crv: nil, x: nil, kid: "rsa", alg: "RS256")
        let document = try JSONEncoder().encode(PublicJWKSet(keys: [issuer.publicJWK, encryption, mismatched, rsa]))
        #expect(try await VerificationKey.keys(fromJWKS: document).map(\.kid) == [issuer.kid])
        await #expect(throws: TokenVerificationError.self) { try await VerificationKey.keys(fromJWKS: Data("nope".utf8)) }
    }
}
