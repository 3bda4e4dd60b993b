package dev.touchstone.kit

import java.io.IOException
import java.net.SocketTimeoutException
import java.util.Base64
import org.json.JSONArray
import org.json.JSONObject

/**
 * Typed calls to the Touchstone HTTP API, v1 (docs/api.md): the same calls as TouchstoneKit's `TouchstoneClient`.
 * Every failure is a [TouchstoneException]: the server's error codes that an app handles on its own
 * ([TouchstoneErrorCode]), `SERVER` with [TouchstoneException.serverCode] for the rest, `TRANSPORT` when no readable
 * answer came.
 *
 * ```kotlin
 * val client = TouchstoneClient(HttpUrlConnectionTransport("https://auth.example.com"))
 * val session = client.signIn(email, password)
 * ```
 *
 * @param transport How requests reach the server.
 * @param logger Where request lines go (never secrets); none by default.
 * @param now The clock (milliseconds) that decides when a cached access token is too old; tests inject their own.
 */
class TouchstoneClient(
    val transport: TouchstoneTransport,
    private val logger: TouchstoneLogger? = null,
    internal val now: () -> Long = System::currentTimeMillis,
) {
    /** A client for the server at [baseUrl] over `HttpURLConnection`. */
    constructor(baseUrl: String) : this(HttpUrlConnectionTransport(baseUrl))

    private val accessTokens = AccessTokenCache(now)

    /** Sessions bound to a proof key (DPoP) and the server's latest nonce. */
    internal val dpop = DPoPBindings()

    // Server and accounts

    /** `GET /v1/config`: what the server allows. */
    suspend fun configuration(): ServerConfiguration = call("GET", "/v1/config").let { decoded("/v1/config") { ServerConfiguration.from(it) } }

    /** `POST /v1/users`: a new account with a password, signed in. */
    suspend fun createUser(email: String, password: String, displayName: String? = null): TouchstoneSession =
        session("/v1/users", call("POST", "/v1/users", body = jsonOf("email" to email, "password" to password, "displayName" to displayName)))

    /** `POST /v1/sessions`: password sign-in. */
    suspend fun signIn(email: String, password: String): TouchstoneSession =
        session("/v1/sessions", call("POST", "/v1/sessions", body = jsonOf("email" to email, "password" to password)))

    /** `GET /v1/session`: the session behind [token] and its user. */
    suspend fun currentSession(token: String): TouchstoneSession = session("/v1/session", call("GET", "/v1/session", token = token))

    /** `DELETE /v1/session`: signs out. */
    suspend fun signOut(token: String) {
        call("DELETE", "/v1/session", token = token)
    }

    // Access tokens

    /**
     * An access token for the app's own API, from the session. A token issued earlier for this session is returned
     * while it has more than [minimumLifetimeSeconds] left; callers asking at the same time share one request.
     *
     * @throws TouchstoneException.Server with [TouchstoneErrorCode.SESSION_ENDED] when the session is over.
     */
    suspend fun accessToken(session: TouchstoneSession, minimumLifetimeSeconds: Long = 30): String =
        accessTokens.token(session.session.token, minimumLifetimeSeconds * 1000) { issueAccessToken(session.session.token) }.token

    /** `POST /v1/session/token`: a new access token, uncached. */
    suspend fun issueAccessToken(sessionToken: String): AccessToken {
        val requestedAt = now()
        try {
            val body = call("POST", "/v1/session/token", token = sessionToken)
            val expiresIn = body.long("expiresIn")
            if (expiresIn < 0) throw MalformedAnswer("field 'expiresIn' is negative")
            return AccessToken(body.string("accessToken"), requestedAt + expiresIn * 1000)
        } catch (e: TouchstoneException) {
            if (e.httpStatus == 401) throw TouchstoneException.Server(TouchstoneErrorCode.SESSION_ENDED, e.message, e.serverCode, e.httpStatus)
            throw e
        } catch (e: MalformedAnswer) {
            throw unreadable("/v1/session/token", 200, e)
        }
    }

    // Confirmations

    /** `GET /v1/confirmations/{id}` with the user's session: the confirmation and what `confirm` takes. */
    suspend fun confirmationRequest(id: String, token: String): Pair<ConfirmationInfo, ConfirmationRequest> {
        val body = call("GET", "/v1/confirmations/${pathComponent(id)}", token = token)
        return decoded("/v1/confirmations/{id}") {
            val info = ConfirmationInfo.from(body.obj("confirmation"))
            info to ConfirmationRequest(info.id, info.summary, body.string("payload"))
        }
    }

    /** `POST /v1/confirmations` with the user's session: what [BiometricLogin.confirm] takes. */
    suspend fun createConfirmation(summary: String, details: JSONObject = JSONObject(), ttlSeconds: Int? = null, token: String): ConfirmationRequest {
        val body = call("POST", "/v1/confirmations", token = token, body = jsonOf("summary" to summary, "details" to details, "ttlSeconds" to ttlSeconds))
        return decoded("/v1/confirmations") {
            val info = ConfirmationInfo.from(body.obj("confirmation"))
            ConfirmationRequest(info.id, info.summary, body.string("payload"))
        }
    }

    /** `POST /v1/confirmations/{id}/approve`: the device key's signature over the payload's UTF-8 bytes. */
    suspend fun approveConfirmation(id: String, registrationId: String, signature: ByteArray): ApprovedConfirmation {
        val body = call("POST", "/v1/confirmations/${pathComponent(id)}/approve",
            body = jsonOf("registrationId" to registrationId, "signature" to base64Url(signature)))
        return decoded("/v1/confirmations/{id}/approve") { ApprovedConfirmation(ConfirmationInfo.from(body.obj("confirmation")), body.string("receipt")) }
    }

    /** `POST /v1/confirmations/{id}/decline` with the user's session. */
    suspend fun declineConfirmation(id: String, token: String): ConfirmationInfo {
        val body = call("POST", "/v1/confirmations/${pathComponent(id)}/decline", token = token)
        return decoded("/v1/confirmations/{id}/decline") { ConfirmationInfo.from(body.obj("confirmation")) }
    }

    // Biometric registrations

    /** `POST /v1/android-key-attestation/challenges`: the challenge to generate an attested key with (base64url). */
    suspend fun androidKeyAttestationChallenge(token: String): String {
        val body = call("POST", "/v1/android-key-attestation/challenges", token = token)
        return decoded("/v1/android-key-attestation/challenges") { body.string("challenge") }
    }

    /**
     * `POST /v1/biometrics/registrations/start`.
     *
     * @param publicKey The key as SubjectPublicKeyInfo DER (what `PublicKey.getEncoded()` gives).
     * @param keyAttestation The key's certificate chain, leaf first (DER), when the key store attested it.
     */
    suspend fun startRegistration(
        token: String,
        publicKey: ByteArray,
        algorithm: String,
        deviceId: String,
        deviceName: String?,
        keyAttestation: List<ByteArray>? = null,
    ): ChallengeGrant {
        val chain = keyAttestation?.let { certificates -> JSONArray(certificates.map { Base64.getEncoder().encodeToString(it) }) }
        val body = call("POST", "/v1/biometrics/registrations/start", token = token, body = jsonOf(
            "publicKey" to base64Url(publicKey), "algorithm" to algorithm, "deviceId" to deviceId,
            "deviceName" to deviceName, "keyAttestation" to chain,
        ))
        return decoded("/v1/biometrics/registrations/start") { ChallengeGrant.from(body) }
    }

    /** `POST /v1/biometrics/registrations/finish`: the registration and its device credential (null from older servers). */
    suspend fun finishEnrolment(token: String, registrationId: String, signature: ByteArray, proofKey: ProofKeyEnrolment? = null): Pair<BiometricRegistration, String?> {
        val input = jsonOf("registrationId" to registrationId, "signature" to base64Url(signature))
        val body = call("POST", "/v1/biometrics/registrations/finish", token = token, body = proofKey?.addTo(input) ?: input)
        return decoded("/v1/biometrics/registrations/finish") { BiometricRegistration.from(body.obj("registration")) to body.stringOrNull("deviceCredential") }
    }

    /** `GET /v1/biometrics/registrations`: the caller's, newest first. */
    suspend fun registrations(token: String): List<BiometricRegistration> {
        val body = call("GET", "/v1/biometrics/registrations", token = token)
        return decoded("/v1/biometrics/registrations") { body.array("registrations").objects("registrations").map(BiometricRegistration::from) }
    }

    /** `DELETE /v1/biometrics/registrations/{id}`: revokes a device. */
    suspend fun deleteRegistration(token: String, id: String) {
        call("DELETE", registrationPath(id), token = token)
    }

    /** Tells the server this device's key is unusable (`reason`: `biometry_changed` or `key_lost`); needs no session. */
    suspend fun invalidateRegistration(id: String, deviceId: String, reason: String) {
        call("POST", "${registrationPath(id)}/invalidate", body = jsonOf("reason" to reason, "deviceId" to deviceId))
    }

    /** `POST /v1/biometrics/registrations/{id}/unlock` (a fresh password session): a locked registration is active again. */
    suspend fun unlockRegistration(token: String, id: String): BiometricRegistration {
        val body = call("POST", "${registrationPath(id)}/unlock", token = token)
        return decoded("/v1/biometrics/registrations/{id}/unlock") { BiometricRegistration.from(body.obj("registration")) }
    }

    // App PIN

    /** `PUT /v1/biometrics/registrations/{id}/pin` (a fresh password session). */
    suspend fun setPin(token: String, registrationId: String, pin: String): BiometricRegistration {
        val body = call("PUT", "${registrationPath(registrationId)}/pin", token = token, body = jsonOf("pin" to pin))
        return decoded("/v1/biometrics/registrations/{id}/pin") { BiometricRegistration.from(body.obj("registration")) }
    }

    /** `DELETE /v1/biometrics/registrations/{id}/pin`. */
    suspend fun removePin(token: String, registrationId: String) {
        call("DELETE", "${registrationPath(registrationId)}/pin", token = token)
    }

    /** `POST /v1/pin/authentications`: a session with `methods: ["pin"]`. */
    suspend fun pinAuthentication(registrationId: String, pin: String, sessionDurationMinutes: Int? = null): TouchstoneSession {
        val body = call("POST", "/v1/pin/authentications",
            body = jsonOf("registrationId" to registrationId, "pin" to pin, "sessionDurationMinutes" to sessionDurationMinutes))
        return decoded("/v1/pin/authentications") { TouchstoneSession.from(body) }
    }

    // Biometric authentication

    /** `POST /v1/biometrics/authentications/start`: a challenge for the registration's key. */
    suspend fun startAuthentication(registrationId: String): ChallengeGrant {
        val body = call("POST", "/v1/biometrics/authentications/start", body = jsonOf("registrationId" to registrationId))
        return decoded("/v1/biometrics/authentications/start") { ChallengeGrant.from(body) }
    }

    /** `POST /v1/biometrics/authentications/finish`: the signature over the challenge's UTF-8 bytes. */
    suspend fun finishAuthentication(registrationId: String, challenge: String, signature: ByteArray, sessionDurationMinutes: Int? = null): TouchstoneSession {
        val body = call("POST", "/v1/biometrics/authentications/finish", body = jsonOf(
            "registrationId" to registrationId, "challenge" to challenge, "signature" to base64Url(signature),
            "sessionDurationMinutes" to sessionDurationMinutes,
        ))
        return decoded("/v1/biometrics/authentications/finish") { TouchstoneSession.from(body) }
    }

    // Passkeys (the JSON is passed through as Credential Manager takes and gives it)

    /** `PublicKeyCredentialCreationOptionsJSON` for adding a passkey to the signed-in account. */
    suspend fun passkeyRegistrationOptions(token: String): JSONObject = call("POST", "/v1/passkeys/registrations/options", token = token, body = JSONObject())

    /** Sends a `RegistrationResponseJSON`; returns the stored passkey. */
    suspend fun verifyPasskeyRegistration(token: String, response: JSONObject): PasskeyInfo {
        val body = call("POST", "/v1/passkeys/registrations/verify", token = token, body = response)
        return decoded("/v1/passkeys/registrations/verify") { PasskeyInfo.from(body.obj("passkey")) }
    }

    /** `PublicKeyCredentialRequestOptionsJSON`; with an email, limited to that account's passkeys. */
    suspend fun passkeyAuthenticationOptions(email: String? = null): JSONObject =
        call("POST", "/v1/passkeys/authentications/options", body = jsonOf("email" to email))

    /** Sends an `AuthenticationResponseJSON`; returns the new session. */
    suspend fun verifyPasskeyAuthentication(response: JSONObject): TouchstoneSession {
        val body = call("POST", "/v1/passkeys/authentications/verify", body = response)
        return decoded("/v1/passkeys/authentications/verify") { TouchstoneSession.from(body) }
    }

    /** `GET /v1/passkeys`: the account's passkeys. */
    suspend fun passkeys(token: String): List<PasskeyInfo> {
        val body = call("GET", "/v1/passkeys", token = token)
        return decoded("/v1/passkeys") { body.array("passkeys").objects("passkeys").map(PasskeyInfo::from) }
    }

    // Plumbing

    internal suspend fun call(method: String, path: String, token: String? = null, body: JSONObject? = null): JSONObject {
        val signer = token?.let { dpop.signer(it) } ?: return callWith(method, path, token?.let { "Bearer $it" }, body)
        val response = exchangeBound(method, path, token, signer, body?.toString()?.toByteArray(Charsets.UTF_8))
        if (response.body.isEmpty()) return JSONObject()
        return try {
            Json.parseObject(response.body)
        } catch (e: MalformedAnswer) {
            throw unreadable(path, response.status, e)
        }
    }

    /** Sends a request with any `Authorization` value (a session, a device credential, a poll token) and reads the JSON. */
    internal suspend fun callWith(method: String, path: String, authorization: String?, body: JSONObject?): JSONObject {
        val response = exchange(method, path, authorization, body?.toString()?.toByteArray(Charsets.UTF_8))
        if (response.body.isEmpty()) return JSONObject()
        return try {
            Json.parseObject(response.body)
        } catch (e: MalformedAnswer) {
            throw unreadable(path, response.status, e)
        }
    }

    internal suspend fun exchange(method: String, path: String, authorization: String?, body: ByteArray?, extra: Map<String, String> = emptyMap()): TransportResponse {
        val headers = HashMap<String, String>(extra)
        headers["Accept"] = "application/json"
        if (authorization != null) headers["Authorization"] = authorization
        if (body != null) headers["Content-Type"] = "application/json"
        val shownPath = path.substringBefore('?')
        val response = try {
            transport.send(TransportRequest(method, path, headers, body))
        } catch (e: TouchstoneException) {
            logger?.log("$method $shownPath -> ${e.code.swiftName}")
            throw e
        } catch (e: SocketTimeoutException) {
            logger?.log("$method $shownPath -> timeout")
            throw TouchstoneException.Transport(TransportFailure.TIMEOUT, "the server did not answer in time", cause = e)
        } catch (e: IOException) {
            logger?.log("$method $shownPath -> unreachable")
            throw TouchstoneException.Transport(TransportFailure.UNREACHABLE, "cannot reach the server: ${e.javaClass.simpleName}", cause = e)
        } catch (e: RuntimeException) {
            // A transport's own fault (a malformed URL, a TLS provider's error): a typed error, never a crash.
            logger?.log("$method $shownPath -> transport failure")
            throw TouchstoneException.Transport(TransportFailure.UNREACHABLE, "the transport failed: ${e.javaClass.simpleName}", cause = e)
        }
        response.headers["dpop-nonce"]?.let { dpop.nonce = it }
        if (response.status in 200..299) {
            logger?.log("$method $shownPath -> ${response.status}")
            return response
        }
        dpop.lastErrorDate = response.headers["date"]?.let(::httpDate)
        val error = try {
            Json.parseObject(response.body).obj("error")
        } catch (e: MalformedAnswer) {
            null
        }
        val code = error?.opt("code") as? String
        val message = error?.opt("message") as? String
        if (code == null || message == null) {
            logger?.log("$method $shownPath -> ${response.status} (no error body)")
            throw TouchstoneException.Transport(TransportFailure.UNREADABLE, "unexpected HTTP ${response.status} from $shownPath", response.status)
        }
        logger?.log("$method $shownPath -> ${response.status} $code")
        throw TouchstoneException.of(errorCodes[code] ?: TouchstoneErrorCode.SERVER, message.take(500), code, response.status)
    }

    private fun session(path: String, body: JSONObject) = decoded(path) { TouchstoneSession.from(body) }

    /** Reads a decoded answer, reporting missing fields and wrong types as an unreadable answer. */
    internal inline fun <T> decoded(path: String, read: () -> T): T = try {
        read()
    } catch (e: MalformedAnswer) {
        throw unreadable(path, 200, e)
    }

    internal fun unreadable(path: String, status: Int, cause: MalformedAnswer) =
        TouchstoneException.Transport(TransportFailure.UNREADABLE, "unreadable answer from $path: ${cause.message}", status, cause)

    companion object {
        /** Server error codes with an SDK code of their own (the same table as TouchstoneKit's); the rest are `SERVER`. */
        val errorCodes: Map<String, TouchstoneErrorCode> = mapOf(
            "registration_revoked" to TouchstoneErrorCode.REGISTRATION_REVOKED,
            "registration_locked" to TouchstoneErrorCode.REGISTRATION_LOCKED,
            "invalid_pin" to TouchstoneErrorCode.PIN_INCORRECT,
            "pin_disabled" to TouchstoneErrorCode.PIN_DISABLED,
            "pin_not_set" to TouchstoneErrorCode.PIN_NOT_SET,
            "rate_limited" to TouchstoneErrorCode.RATE_LIMITED,
            "login_throttled" to TouchstoneErrorCode.RATE_LIMITED,
            "confirmation_expired" to TouchstoneErrorCode.CONFIRMATION_EXPIRED,
            "confirmation_not_pending" to TouchstoneErrorCode.CONFIRMATION_NOT_PENDING,
            "sign_in_request_expired" to TouchstoneErrorCode.SIGN_IN_REQUEST_EXPIRED,
            "sign_in_request_not_pending" to TouchstoneErrorCode.SIGN_IN_REQUEST_NOT_PENDING,
            "wrong_number" to TouchstoneErrorCode.WRONG_NUMBER,
            "invalid_device_credential" to TouchstoneErrorCode.DEVICE_CREDENTIAL_INVALID,
        )

        /** base64url without padding, as the API writes binary fields. */
        fun base64Url(bytes: ByteArray): String = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes)

        /** An id as one path segment: letters, digits, `-` and `_` as they are, every other UTF-8 byte percent-encoded. */
        internal fun pathComponent(id: String): String = buildString {
            for (byte in id.toByteArray(Charsets.UTF_8)) {
                val c = byte.toInt() and 0xFF
                if (c in 'a'.code..'z'.code || c in 'A'.code..'Z'.code || c in '0'.code..'9'.code || c == '-'.code || c == '_'.code) {
                    append(c.toChar())
                } else {
                    append('%').append("0123456789ABCDEF"[c shr 4]).append("0123456789ABCDEF"[c and 0xF])
                }
            }
        }

        internal fun registrationPath(id: String) = "/v1/biometrics/registrations/${pathComponent(id)}"
    }
}
