import ArgumentParser
import Crypto
import Foundation
import TouchstoneCrypto
import TouchstoneDPoP
import TouchstoneWebAuthn
import _CryptoExtras

/// Benchmarks. They report; they never gate CI.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure performance (reports numbers; never used as a test).",
        subcommands: [VerifyBench.self, LoginBench.self, SeedBench.self, OpenIDBench.self, SessionBench.self]
    )
}

/// Raw signature verification against Touchstone's full verification paths, on the same inputs, in one process.
struct VerifyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Compare raw swift-crypto verification with Touchstone's full device-key and WebAuthn paths."
    )

    @Option(name: .long, help: "Seconds to run each case.")
    var seconds: Double = 2

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    @Flag(name: .long, help: "Also time the parts of the WebAuthn path other than the signature.")
    var breakdown = false

    struct Result: Encodable {
        var name: String
        var operationsPerSecond: Double
        /// Full path throughput over the raw verification it contains (1.0 = no overhead).
        var ratioToRaw: Double?
    }

    func run() async throws {
        guard self.seconds > 0 else { throw ValidationError("--seconds must be positive") }
        let challenge = Base64.urlEncode((0..<32).map { UInt8($0) })
        let message = Array(challenge.utf8)
        var results: [Result] = []
        // The server's finish path: the stored key comes from its parsed-key cache, the signature from base64url.
        let keys = DevicePublicKeyCache()

        // ES256: a P-256 device key (Secure Enclave), DER signature (SecKeyCreateSignature).
        let p256 = P256.Signing.PrivateKey()
        let p256Signature = try p256.signature(for: message)
        // The raw cases verify with a public key object made once (a private key's `publicKey` builds a new one per call).
        let p256Public = p256.publicKey
        let p256RawBody: () -> Bool = { p256Public.isValidSignature(p256Signature, for: message) }
        let p256SPKI = [UInt8](p256.publicKey.derRepresentation)
        let p256Wire = Base64.urlEncode(p256Signature.derRepresentation)
        let p256FullBody: () -> Bool = {
            guard let key = try? keys.key(bytes: p256SPKI, algorithm: .es256), let signature = Base64.decode(p256Wire) else {
                return false
            }
            return key.isValidSignature(signature, for: Array(challenge.utf8))
        }
        let (p256Raw, p256Full) = self.measurePair(raw: p256RawBody, full: p256FullBody)
        results += [
            Result(name: "P-256 raw (swift-crypto)", operationsPerSecond: p256Raw),
            Result(name: "ES256 device-key finish path", operationsPerSecond: p256Full, ratioToRaw: p256Full / p256Raw),
        ]

        // EdDSA: an Ed25519 device key.
        let ed = Curve25519.Signing.PrivateKey()
        let edSignature = try ed.signature(for: message)
        let edPublicKey = ed.publicKey
        let edRawBody: () -> Bool = { edPublicKey.isValidSignature(edSignature, for: message) }
        let edPublic = [UInt8](ed.publicKey.rawRepresentation)
        let edWire = Base64.urlEncode(edSignature)
        let edFullBody: () -> Bool = {
            guard let key = try? keys.key(bytes: edPublic, algorithm: .eddsa), let signature = Base64.decode(edWire) else {
                return false
            }
            return key.isValidSignature(signature, for: Array(challenge.utf8))
        }
        let (edRaw, edFull) = self.measurePair(raw: edRawBody, full: edFullBody)
        results += [
            Result(name: "Ed25519 raw (swift-crypto)", operationsPerSecond: edRaw),
            Result(name: "EdDSA device-key finish path", operationsPerSecond: edFull, ratioToRaw: edFull / edRaw),
        ]

        // RS256: a 2048-bit RSA key (react-native-biometrics).
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let rsaSignature = try rsa.signature(for: message, padding: .insecurePKCS1v1_5)
        let rsaPublic = rsa.publicKey
        let rsaRawBody: () -> Bool = { rsaPublic.isValidSignature(rsaSignature, for: message, padding: .insecurePKCS1v1_5) }
        let rsaSPKI = [UInt8](rsa.publicKey.derRepresentation)
        let rsaWire = Base64.urlEncode(rsaSignature.rawRepresentation)
        let rsaFullBody: () -> Bool = {
            guard let key = try? keys.key(bytes: rsaSPKI, algorithm: .rs256), let signature = Base64.decode(rsaWire) else {
                return false
            }
            return key.isValidSignature(signature, for: Array(challenge.utf8))
        }
        let (rsaRaw, rsaFull) = self.measurePair(raw: rsaRawBody, full: rsaFullBody)
        results += [
            Result(name: "RSA-2048 raw (swift-crypto)", operationsPerSecond: rsaRaw),
            Result(name: "RS256 device-key finish path", operationsPerSecond: rsaFull, ratioToRaw: rsaFull / rsaRaw),
        ]
        if self.breakdown {
            // The RS256 path's parts other than the signature.
            let parts: [(String, () -> Bool)] = [
                ("  part: RS256 key from the cache", { (try? keys.key(bytes: rsaSPKI, algorithm: .rs256)) != nil }),
                ("  part: base64url of the RS256 signature", { Base64.decode(rsaWire)?.count == 256 }),
            ]
            for (name, body) in parts {
                results.append(Result(name: name, operationsPerSecond: self.measure(body)))
            }
        }

        // DPoP (RFC 9449): an ES256 proof with ath, verified as the server does (parse, key, signature, claims).
        let dpopURL = "https://auth.example.com/v1/session"
        let dpopToken = Base64.urlEncode((0..<32).map { UInt8($0 ^ 0x5A) })
        let dpopProof = try Self.dpopProof(p256, url: dpopURL, accessToken: dpopToken, issuedAt: 1_800_000_000)
        let dpopVerifier = DPoPVerifier()
        let dpopNow = Date(timeIntervalSince1970: 1_800_000_000)
        let dpopBody: () -> Bool = {
            (try? dpopVerifier.verify(dpopProof, method: "GET", url: dpopURL, accessToken: dpopToken, at: dpopNow)) != nil
        }
        let (dpopRaw, dpopFull) = self.measurePair(raw: p256RawBody, full: dpopBody)
        results += [
            Result(name: "P-256 raw (swift-crypto)", operationsPerSecond: dpopRaw),
            Result(name: "DPoP proof verification (ES256, ath)", operationsPerSecond: dpopFull, ratioToRaw: dpopFull / dpopRaw),
        ]

        // WebAuthn: a realistic AuthenticationResponseJSON, verified from its JSON bytes (ES256 passkey).
        let rp = RelyingParty(id: "example.com", name: "Example", origins: ["https://example.com"])
        let coseKeys = ParsedValueCache<BytesKey, COSEKey>(capacity: 10_000)
        let authenticator = VirtualAuthenticator()
        let webChallenge = (0..<32).map { UInt8(255 - $0) }
        var credential = authenticator.register(rpId: "example.com", origin: "https://example.com", challenge: webChallenge, userHandle: [1]).credential
        let stored = StoredCredential(id: credential.id, publicKey: credential.publicKeyCOSE, signCount: 0, backupEligible: true, userHandle: [1])
        let options = try JSONSerialization.data(withJSONObject: ["challenge": Base64.urlEncode(webChallenge), "rpId": "example.com"])
        let responseJSON = Data(try authenticator.respond(toRequestOptions: Array(options), credential: &credential, origin: "https://example.com"))
        let assertion = try JSONDecoder().decode(AuthenticationResponseJSON.self, from: responseJSON).decoded()
        let webSigned = assertion.authenticatorData + Array(SHA256.hash(data: assertion.clientDataJSON))
        let webKey = try P256.Signing.PublicKey(x963Representation: [0x04] + Self.coordinates(credential.publicKeyCOSE))
        let webSignature = try P256.Signing.ECDSASignature(derRepresentation: assertion.signature)
        let webRawBody: () -> Bool = { webKey.isValidSignature(webSignature, for: webSigned) }
        let webFullBody: () -> Bool = {
            guard let response = try? AuthenticationResponseJSON(json: Array(responseJSON)),
                let fields = try? response.decoded()
            else { return false }
            return (try? rp.verifyAuthentication(
                credentialId: fields.credentialId,
                clientDataJSON: fields.clientDataJSON,
                authenticatorData: fields.authenticatorData,
                signature: fields.signature,
                userHandle: fields.userHandle,
                challenge: webChallenge,
                credential: stored,
                keys: coseKeys
            )) != nil
        }
        let (webRaw, webFull) = self.measurePair(raw: webRawBody, full: webFullBody)
        if self.breakdown {
            // The parts of the WebAuthn path that are not the signature, each on its own.
            let clientDataJSON = assertion.clientDataJSON
            let authenticatorData = assertion.authenticatorData
            let parts: [(String, () -> Bool)] = [
                ("  part: response JSON + base64url fields", {
                    (try? AuthenticationResponseJSON(json: Array(responseJSON)).decoded()) != nil
                }),
                ("  part: clientDataJSON parse", { (try? CollectedClientData(bytes: clientDataJSON)) != nil }),
                ("  part: authenticator data parse", { (try? AuthenticatorData(bytes: authenticatorData)) != nil }),
                ("  part: COSE key from the cache", {
                    (try? coseKeys.value(for: BytesKey(stored.publicKey)) { () throws(WebAuthnError) in try COSEKey(bytes: stored.publicKey) }) != nil
                }),
                ("  part: COSE key parse (no cache)", { (try? COSEKey(bytes: stored.publicKey)) != nil }),
                ("  part: DER signature parse", {
                    ECDSASignatureEncoding.rawFromDER(assertion.signature)
                        .flatMap { try? P256.Signing.ECDSASignature(rawRepresentation: $0) } != nil
                }),
                ("  part: SHA-256 of clientDataJSON", { Array(SHA256.hash(data: clientDataJSON)).count == 32 }),
                ("  part: signature check with the cached COSE key", {
                    guard let key = try? coseKeys.value(for: BytesKey(stored.publicKey), parse: { () throws(WebAuthnError) in
                        try COSEKey(bytes: stored.publicKey)
                    }) else { return false }
                    return key.isValidSignature(assertion.signature, for: webSigned)
                }),
                ("  part: the whole check, response JSON parsed once", {
                    (try? rp.verifyAuthentication(
                        credentialId: assertion.credentialId,
                        clientDataJSON: assertion.clientDataJSON,
                        authenticatorData: assertion.authenticatorData,
                        signature: assertion.signature,
                        userHandle: assertion.userHandle,
                        challenge: webChallenge,
                        credential: stored,
                        keys: coseKeys
                    )) != nil
                }),
            ]
            for (name, body) in parts {
                results.append(Result(name: name, operationsPerSecond: self.measure(body)))
            }
        }
        results += [
            Result(name: "P-256 raw over authData‖hash", operationsPerSecond: webRaw),
            Result(name: "WebAuthn assertion full path (JSON in)", operationsPerSecond: webFull, ratioToRaw: webFull / webRaw),
        ]

        if self.json {
            try printJSON(results)
        } else {
            print("Case                                        ops/s     vs raw")
            for result in results {
                let name = result.name.padding(toLength: 40, withPad: " ", startingAt: 0)
                let ops = String(format: "%10.0f", result.operationsPerSecond)
                let ratio = result.ratioToRaw.map { String(format: "%8.1f %%", $0 * 100) } ?? ""
                print("\(name)\(ops)  \(ratio)")
            }
        }
    }

    /// Runs `body` repeatedly for the configured time on one core; returns operations per second. A `false` result
    /// (a verification that failed) aborts: a benchmark of a failing path would be meaningless.
    /// A DPoP proof signed by `key` (header and claims as a client sends them).
    static func dpopProof(_ key: P256.Signing.PrivateKey, url: String, accessToken: String, issuedAt: Int) throws -> String {
        let point = [UInt8](key.publicKey.x963Representation)
        let jwk = #"{"crv":"P-256","kty":"EC","x":"\#(Base64.urlEncode(Array(point[1..<33])))","y":"\#(Base64.urlEncode(Array(point[33..<65])))"}"#
        let header = #"{"alg":"ES256","jwk":\#(jwk),"typ":"dpop+jwt"}"#
        let ath = Base64.urlEncode(Array(SHA256.hash(data: Array(accessToken.utf8))))
        let claims = #"{"ath":"\#(ath)","htm":"GET","htu":"\#(url)","iat":\#(issuedAt),"jti":"bench-jti"}"#
        let input = Base64.urlEncode(Array(header.utf8)) + "." + Base64.urlEncode(Array(claims.utf8))
        return input + "." + Base64.urlEncode(Array(try key.signature(for: Array(input.utf8)).rawRepresentation))
    }

    /// Measures a raw case and its full path in alternating 50 ms slices, so that a machine whose speed drifts (other
    /// tenants, frequency changes) slows both alike and their ratio stays meaningful.
    private func measurePair(raw: () -> Bool, full: () -> Bool) -> (raw: Double, full: Double) {
        for _ in 0..<50 {
            precondition(raw(), "benchmark case failed to verify")
            precondition(full(), "benchmark case failed to verify")
        }
        let clock = ContinuousClock()
        let slice = Duration.milliseconds(50)
        let slices = max(1, Int(self.seconds * 1000 / 50))
        var counts = (raw: 0, full: 0)
        var elapsed = (raw: Duration.zero, full: Duration.zero)
        func run(_ body: () -> Bool) -> (Int, Duration) {
            let start = clock.now
            var count = 0
            while clock.now - start < slice {
                for _ in 0..<16 { precondition(body(), "benchmark case failed to verify") }
                count += 16
            }
            return (count, clock.now - start)
        }
        for _ in 0..<slices {
            let (rawCount, rawTime) = run(raw)
            let (fullCount, fullTime) = run(full)
            counts.raw += rawCount
            elapsed.raw += rawTime
            counts.full += fullCount
            elapsed.full += fullTime
        }
        func rate(_ count: Int, _ duration: Duration) -> Double {
            let (seconds, attoseconds) = duration.components
            return Double(count) / (Double(seconds) + Double(attoseconds) / 1e18)
        }
        return (rate(counts.raw, elapsed.raw), rate(counts.full, elapsed.full))
    }

    private func measure(_ body: () -> Bool) -> Double {
        for _ in 0..<50 { precondition(body(), "benchmark case failed to verify") }  // warm-up
        let clock = ContinuousClock()
        let start = clock.now
        let budget = Duration.milliseconds(Int(self.seconds * 1000))
        var count = 0
        while clock.now - start < budget {
            for _ in 0..<64 { precondition(body(), "benchmark case failed to verify") }
            count += 64
        }
        let elapsed = clock.now - start
        let (seconds, attoseconds) = elapsed.components
        return Double(count) / (Double(seconds) + Double(attoseconds) / 1e18)
    }

    private static func coordinates(_ cose: [UInt8]) throws -> [UInt8] {
        guard let map = try CBORDecoder().decode(cose).mapValue, let x = map[int: -2]?.bytesValue, let y = map[int: -3]?.bytesValue else {
            throw ValidationError("unexpected COSE key")
        }
        return x + y
    }
}
