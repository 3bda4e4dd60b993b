// The verification paths of a sign-in, each beside its raw signature check, with allocations counted: a regression
// shows as a number (`swift package benchmark baseline compare`), not a feeling.
import Benchmark
import Crypto
import Foundation
import TouchstoneCrypto
import TouchstoneWebAuthn

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .instructions],
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )

    // A device key's finish: the stored key from the parsed-key cache, the base64url signature, the check.
    let challenge = Base64.urlEncode((0..<32).map { UInt8($0) })
    let message = Array(challenge.utf8)
    let p256 = P256.Signing.PrivateKey()
    let signature = try! p256.signature(for: message)
    let publicKey = p256.publicKey
    let spki = [UInt8](publicKey.derRepresentation)
    let wire = Base64.urlEncode(signature.derRepresentation)
    let keys = DevicePublicKeyCache()

    Benchmark("P-256 verify (raw swift-crypto)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(publicKey.isValidSignature(signature, for: message)) }
    }
    Benchmark("ES256 device-key finish path") { benchmark in
        for _ in benchmark.scaledIterations {
            let key = try keys.key(bytes: spki, algorithm: .es256)
            blackHole(key.isValidSignature(Base64.decode(wire)!, for: message))
        }
    }

    // A passkey assertion as a browser posts it, verified from its JSON bytes.
    let rp = RelyingParty(id: "example.com", name: "Example", origins: ["https://example.com"])
    let coseKeys = ParsedValueCache<BytesKey, COSEKey>(capacity: 1000)
    let authenticator = VirtualAuthenticator()
    let webChallenge = (0..<32).map { UInt8(255 - $0) }
    var credential = authenticator.register(rpId: "example.com", origin: "https://example.com", challenge: webChallenge, userHandle: [1]).credential
    let stored = StoredCredential(id: credential.id, publicKey: credential.publicKeyCOSE, signCount: 0, backupEligible: true, userHandle: [1])
    let options = try! JSONSerialization.data(withJSONObject: ["challenge": Base64.urlEncode(webChallenge), "rpId": "example.com"])
    let responseJSON = try! authenticator.respond(toRequestOptions: Array(options), credential: &credential, origin: "https://example.com")
    let fields = try! AuthenticationResponseJSON(json: responseJSON).decoded()

    Benchmark("WebAuthn assertion from JSON (full path)") { benchmark in
        for _ in benchmark.scaledIterations {
            let fields = try AuthenticationResponseJSON(json: responseJSON).decoded()
            blackHole(
                try rp.verifyAuthentication(
                    credentialId: fields.credentialId,
                    clientDataJSON: fields.clientDataJSON,
                    authenticatorData: fields.authenticatorData,
                    signature: fields.signature,
                    userHandle: fields.userHandle,
                    challenge: webChallenge,
                    credential: stored,
                    keys: coseKeys
                )
            )
        }
    }
    Benchmark("WebAuthn part: response JSON and base64url") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try AuthenticationResponseJSON(json: responseJSON).decoded()) }
    }
    Benchmark("WebAuthn part: clientDataJSON") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try CollectedClientData(bytes: fields.clientDataJSON)) }
    }
    Benchmark("WebAuthn part: authenticator data") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try AuthenticatorData(bytes: fields.authenticatorData)) }
    }
}
