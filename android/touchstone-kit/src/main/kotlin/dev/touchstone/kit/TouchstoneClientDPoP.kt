package dev.touchstone.kit

import java.text.SimpleDateFormat
import java.util.Locale
import java.util.TimeZone
import org.json.JSONObject

// DPoP (RFC 9449; issue #43): sessions bound to the phone's proof key are sent as `Authorization: DPoP <token>` with a
// fresh proof on every request; a `use_dpop_nonce` answer is retried once with the server's nonce (kept), and a proof
// refused for its age once more with the server's clock (its `Date`). TouchstoneKit's `TouchstoneClient+DPoP.swift`.

/** Sends [token]'s requests with proofs from [signer] from now on ([BiometricLogin] does this for its sign-ins). */
fun TouchstoneClient.bind(token: String, signer: DPoPProofSigner) = dpop.bind(token, signer)

/** Whether [session]'s requests carry DPoP proofs. */
fun TouchstoneClient.isBound(session: TouchstoneSession): Boolean = dpop.signer(session.session.token) != null

/**
 * The headers for a request of your own API with an access token of [session] ([TouchstoneClient.accessToken]):
 * `Authorization: DPoP <token>` and a `DPoP` proof for [method] and [url] when the session is bound (its access tokens
 * are bound too), `Authorization: Bearer <token>` otherwise.
 */
suspend fun TouchstoneClient.authorizationHeaders(session: TouchstoneSession, accessToken: String, method: String, url: String): Map<String, String> {
    val signer = dpop.signer(session.session.token) ?: return mapOf("Authorization" to "Bearer $accessToken")
    val proof = signer.proof(method, url, accessToken, null, (now() + dpop.clockOffsetMillis) / 1000)
    return mapOf("Authorization" to "DPoP $accessToken", "DPoP" to proof)
}

/** A request of a bound session: a proof with `ath`, retried once for a nonce and once for the clock. */
internal suspend fun TouchstoneClient.exchangeBound(method: String, path: String, token: String, signer: DPoPProofSigner, body: ByteArray?): TransportResponse {
    val base = transport.serverUrl ?: throw TouchstoneException.Internal("DPoP proofs need the server's URL: give the transport one")
    val url = base.trimEnd('/') + DPoPProofSigner.withoutQuery(path)
    var nonceRetried = false
    var clockRetried = false
    while (true) {
        val proof = signer.proof(method, url, token, dpop.nonce, (now() + dpop.clockOffsetMillis) / 1000)
        try {
            return exchange(method, path, "DPoP $token", body, mapOf("DPoP" to proof))
        } catch (e: TouchstoneException) {
            when {
                e.serverCode == "use_dpop_nonce" && !nonceRetried -> nonceRetried = true
                e.serverCode == "invalid_dpop_proof" && !clockRetried && isClockRefusal(e.message) -> {
                    clockRetried = true
                    val serverDate = dpop.lastErrorDate ?: throw e
                    dpop.clockOffsetMillis = serverDate - now()
                }
                else -> throw e
            }
        }
    }
}

/** The server's reasons for a proof whose `iat` is outside its window (docs/api.md). */
internal fun isClockRefusal(message: String) = message.contains("older than") || message.contains("ahead of the server's clock")

/** An HTTP-date (RFC 9110 §5.6.7), in milliseconds; null when it does not parse. */
internal fun httpDate(text: String): Long? = try {
    SimpleDateFormat("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).apply { timeZone = TimeZone.getTimeZone("GMT") }.parse(text)?.time
} catch (e: java.text.ParseException) {
    null
}

/**
 * The proof key's part of an enrolment or a device-key sign-up: its public key, its signature and, when the device key
 * was attested, its own attestation chain (made with the enrolment challenge's UTF-8 bytes as attestation challenge).
 */
class ProofKeyEnrolment(val publicKey: ProofKeyPublicKey, val signature: ByteArray, val attestationChain: List<ByteArray>? = null) {
    internal fun addTo(json: JSONObject): JSONObject {
        json.put("proofKey", JSONObject(publicKey.jwk)).put("proofKeySignature", TouchstoneClient.base64Url(signature))
        attestationChain?.let { chain -> json.put("proofKeyAttestation", org.json.JSONArray(chain.map { java.util.Base64.getEncoder().encodeToString(it) })) }
        return json
    }
}

/**
 * `POST /v1/biometrics/registrations/{id}/proof-key`: a proof key for a registration enrolled without one; [signature]
 * (the device key's) and [proofKeySignature] are both over `<challenge>.<thumbprint>`.
 */
suspend fun TouchstoneClient.addProofKey(
    token: String, registrationId: String, challenge: String, signature: ByteArray, proofKey: ProofKeyPublicKey, proofKeySignature: ByteArray,
    proofKeyAttestation: List<ByteArray>? = null,
): BiometricRegistration {
    val path = "${TouchstoneClient.registrationPath(registrationId)}/proof-key"
    val body = call("POST", path, token = token, body = ProofKeyEnrolment(proofKey, proofKeySignature, proofKeyAttestation).addTo(
        jsonOf("challenge" to challenge, "signature" to TouchstoneClient.base64Url(signature))))
    return decoded(path) { BiometricRegistration.from(body.obj("registration")) }
}
