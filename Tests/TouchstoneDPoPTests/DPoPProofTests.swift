import Crypto
import Foundation
import Testing
import TouchstoneCrypto
import TouchstoneDPoP
import TouchstoneTesting
import _CryptoExtras

typealias ProofMaker = DPoPProofMaker

struct DPoPProofTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let verifier = DPoPVerifier()

    static func verify(_ proof: String, method: String = "POST", url: String = "https://auth.example.com/oauth2/token",
                       accessToken: String? = nil, nonce: ((String) -> Bool)? = nil, at now: Date = Self.now) throws(DPoPError) -> VerifiedDPoPProof {
        try Self.verifier.verify(proof, method: method, url: url, accessToken: accessToken, nonce: nonce, at: now)
    }

    static func refusal(_ body: () throws(DPoPError) -> VerifiedDPoPProof) -> DPoPError.Code? {
        do {
            _ = try body()
            return nil
        } catch {
            return error.code
        }
    }

    /// RFC 7638 §3.1's example key and its thumbprint (the RFC's own test vector).
    @Test func theRFC7638ExampleThumbprint() throws {
        let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        let key = try DPoPPublicKey(jwk: ["kty": "RSA", "n": n, "e": "AQAB", "alg": "RS256", "kid": "2011-04-29"])
        #expect(key.thumbprint == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }

    @Test func aProofOfEachAlgorithmVerifies() throws {
        let makers = [
            ProofMaker.p256(), ProofMaker(key: .ed25519(Curve25519.Signing.PrivateKey())),
            ProofMaker(key: .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048), pss: false)),
            ProofMaker(key: .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048), pss: true)),
        ]
        for maker in makers {
            let verified = try Self.verify(maker.proof(accessToken: "token-1"), accessToken: "token-1")
            #expect(verified.thumbprint == (try DPoPPublicKey(jwk: maker.jwk)).thumbprint, "\(maker.alg)")
            #expect(verified.thumbprint.utf8.count == 43)
        }
    }

    @Test func everyCheckRefusesItsViolation() throws {
        let maker = ProofMaker.p256()
        let other = ProofMaker.p256()
        let cases: [(DPoPError.Code, () throws(DPoPError) -> VerifiedDPoPProof)] = [
            (.wrongType, { () throws(DPoPError) in try Self.verify(maker.proof(header: { $0["typ"] = "JWT" })) }),
            (.unsupportedAlgorithm, { () throws(DPoPError) in try Self.verify(maker.proof(header: { $0["alg"] = "none" })) }),
            (.unsupportedAlgorithm, { () throws(DPoPError) in try Self.verify(maker.proof(header: { $0["alg"] = "HS256" })) }),
            (.privateKey, { () throws(DPoPError) in try Self.verify(maker.proof(header: { $0["jwk"] = maker.jwk.merging(["d": "AAAA"]) { a, _ in a } })) }),
            (.invalidKey, { () throws(DPoPError) in try Self.verify(maker.proof(header: { $0["jwk"] = nil })) }),
            (.invalidSignature, { () throws(DPoPError) in try Self.verify(maker.proof(header: { $0["jwk"] = other.jwk })) }),
            (.invalidSignature, { () throws(DPoPError) in try Self.verify(maker.proof(signature: { s in var s = s; s[10] ^= 1; return s })) }),
            (.invalidSignature, { () throws(DPoPError) in  // DER is not JWS ES256
                try Self.verify(maker.proof(signature: { s in Array(try! P256.Signing.ECDSASignature(rawRepresentation: s).derRepresentation) }))
            }),
            (.invalidSignature, { () throws(DPoPError) in try Self.verify(maker.proof(header: { $0["alg"] = "EdDSA" })) }),
            (.methodMismatch, { () throws(DPoPError) in try Self.verify(maker.proof(method: "GET")) }),
            (.urlMismatch, { () throws(DPoPError) in try Self.verify(maker.proof(url: "https://auth.example.com/oauth2/other")) }),
            (.urlMismatch, { () throws(DPoPError) in try Self.verify(maker.proof(url: "https://evil.example.com/oauth2/token")) }),
            (.urlMismatch, { () throws(DPoPError) in try Self.verify(maker.proof(url: "https://auth.example.com/oauth2/token?x=1")) }),
            (.urlMismatch, { () throws(DPoPError) in try Self.verify(maker.proof(url: "http://auth.example.com/oauth2/token")) }),
            (.stale, { () throws(DPoPError) in try Self.verify(maker.proof(iat: Self.now.addingTimeInterval(-61))) }),
            (.future, { () throws(DPoPError) in try Self.verify(maker.proof(iat: Self.now.addingTimeInterval(6))) }),
            (.malformed, { () throws(DPoPError) in try Self.verify(maker.proof(claims: { $0["iat"] = "1800000000" })) }),
            (.malformed, { () throws(DPoPError) in try Self.verify(maker.proof(claims: { $0["jti"] = nil })) }),
            (.missingAccessTokenHash, { () throws(DPoPError) in try Self.verify(maker.proof(), accessToken: "token-1") }),
            (.accessTokenHashMismatch, { () throws(DPoPError) in try Self.verify(maker.proof(accessToken: "token-2"), accessToken: "token-1") }),
            (.unexpectedAccessTokenHash, { () throws(DPoPError) in try Self.verify(maker.proof(accessToken: "token-1")) }),
            (.nonceRequired, { () throws(DPoPError) in try Self.verify(maker.proof(), nonce: { _ in true }) }),
            (.nonceMismatch, { () throws(DPoPError) in try Self.verify(maker.proof(nonce: "old"), nonce: { $0 == "current" }) }),
            (.malformed, { () throws(DPoPError) in try Self.verify("a.b") }),
            (.malformed, { () throws(DPoPError) in try Self.verify(maker.proof() + "=") }),
            (.tooLarge, { () throws(DPoPError) in try Self.verify(String(repeating: "a", count: 8193)) }),
        ]
        for (expected, attempt) in cases {
            #expect(Self.refusal(attempt) == expected, "expected \(expected)")
        }
        // The nonce case that passes, the skew allowance, the normalised URL, a query on the request (ignored).
        #expect(try Self.verify(maker.proof(nonce: "current"), nonce: { $0 == "current" }).nonce == "current")
        _ = try Self.verify(maker.proof(iat: Self.now.addingTimeInterval(4)))
        _ = try Self.verify(maker.proof(url: "HTTPS://Auth.Example.COM:443/oauth2/token"))
        _ = try Self.verify(maker.proof(), url: "https://auth.example.com/oauth2/token?grant=x")
        #expect(DPoPError(.nonceRequired, "").oauthError == "use_dpop_nonce" && DPoPError(.stale, "").oauthError == "invalid_dpop_proof")
    }

    @Test func theReplayCacheRefusesASecondUseUntilItExpires() async throws {
        let cache = InMemoryDPoPReplayCache(capacity: 2)
        let later = Self.now.addingTimeInterval(60)
        #expect(try await cache.use(jti: "a", thumbprint: "k1", until: later, at: Self.now))
        #expect(try await cache.use(jti: "a", thumbprint: "k1", until: later, at: Self.now) == false)
        #expect(try await cache.use(jti: "a", thumbprint: "k2", until: later, at: Self.now))
        // Full: a new jti is refused rather than an unexpired one forgotten.
        #expect(try await cache.use(jti: "b", thumbprint: "k1", until: later, at: Self.now) == false)
        // Once the entries expire they no longer count, and make room.
        let afterwards = later.addingTimeInterval(1)
        #expect(try await cache.use(jti: "a", thumbprint: "k1", until: afterwards.addingTimeInterval(60), at: afterwards))
        #expect(try await cache.use(jti: "b", thumbprint: "k1", until: afterwards.addingTimeInterval(60), at: afterwards))
    }

    @Test func aJtiUsedAgainAfterItExpiredIsKeptWhenItsOldEntryIsDropped() async throws {
        let cache = InMemoryDPoPReplayCache(capacity: 10)
        let t = Self.now
        // "late" expires first but sits behind "early" (expiries follow each proof's iat, not the order of arrival).
        #expect(try await cache.use(jti: "early", thumbprint: "k", until: t.addingTimeInterval(100), at: t))
        #expect(try await cache.use(jti: "late", thumbprint: "k", until: t.addingTimeInterval(50), at: t))
        // Expired, then used again by a newer proof until t + 120.
        #expect(try await cache.use(jti: "late", thumbprint: "k", until: t.addingTimeInterval(120), at: t.addingTimeInterval(60)))
        // Dropping the old entry (and "early") must not forget the new one.
        #expect(try await cache.use(jti: "late", thumbprint: "k", until: t.addingTimeInterval(120), at: t.addingTimeInterval(101)) == false)
    }

    @Test func theReplayCacheStaysRightAsItDropsAndCompactsThousandsOfEntries() async throws {
        let cache = InMemoryDPoPReplayCache(capacity: 100)
        let t = Self.now
        // One new jti a second, each kept 10 s: the cache holds about ten, drops one a call and cuts its front off
        // several times (past 1,024 dropped).
        for second in 0..<5_000 {
            let now = t.addingTimeInterval(TimeInterval(second))
            #expect(try await cache.use(jti: "j\(second)", thumbprint: "k", until: now.addingTimeInterval(10), at: now))
            if second >= 5 {
                #expect(try await cache.use(jti: "j\(second - 5)", thumbprint: "k", until: now, at: now) == false, "unexpired")
            }
        }
        // Never full: what expired was dropped (a hundred entries would have refused the 101st).
        let end = t.addingTimeInterval(5_000)
        #expect(try await cache.use(jti: "last", thumbprint: "k", until: end.addingTimeInterval(10), at: end))
    }
}

struct DPoPNonceTests {
    @Test func nonceOfThisOrTheLastPeriodOrTheNextWithinTheSkewAreAcceptedAndNothingElse() {
        let key = SymmetricKey(size: .bits256)
        let nonces = DPoPNonces(key: key)
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        let nonce = nonces.current(at: t)
        #expect(nonces.isAcceptable(nonce, at: t))
        #expect(nonces.isAcceptable(nonce, at: t.addingTimeInterval(60)), "the previous period's")
        #expect(!nonces.isAcceptable(nonce, at: t.addingTimeInterval(120)), "older")
        #expect(!nonces.isAcceptable(nonces.current(at: t.addingTimeInterval(60)), at: t), "from the future")
        // The next period's from an instance whose clock is a little ahead: within the 5 s allowance of its start only.
        let start = t.addingTimeInterval(60 - t.timeIntervalSince1970.truncatingRemainder(dividingBy: 60))
        let ahead = nonces.current(at: start)
        #expect(nonces.isAcceptable(ahead, at: start.addingTimeInterval(-5)), "5 s before its period")
        #expect(!nonces.isAcceptable(ahead, at: start.addingTimeInterval(-6)), "6 s before its period")
        #expect(!DPoPNonces(key: key, allowedSkew: 0).isAcceptable(ahead, at: start.addingTimeInterval(-1)), "no allowance")
        #expect(DPoPNonces(key: key, allowedSkew: 0).isAcceptable(ahead, at: start), "its own period")
        #expect(!nonces.isAcceptable(nonces.current(at: start.addingTimeInterval(60)), at: start.addingTimeInterval(-1)), "two periods ahead")
        #expect(!DPoPNonces(key: SymmetricKey(size: .bits256)).isAcceptable(nonce, at: t), "another key's")
        var forged = Array(Base64.urlDecodeCanonical(nonce)!)
        forged[23] ^= 1
        #expect(!nonces.isAcceptable(Base64.urlEncode(forged), at: t))
        #expect(!nonces.isAcceptable("", at: t) && !nonces.isAcceptable(String(repeating: "A", count: 32), at: t))
        // Another instance with the same key agrees.
        #expect(DPoPNonces(key: SymmetricKey(data: [UInt8](repeating: 7, count: 32))).current(at: t)
            == DPoPNonces(key: SymmetricKey(data: [UInt8](repeating: 7, count: 32))).current(at: t))
    }
}
