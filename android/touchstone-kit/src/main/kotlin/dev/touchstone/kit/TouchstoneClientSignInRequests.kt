package dev.touchstone.kit

import java.net.URLEncoder
import org.json.JSONObject

// Sign-in approved on the phone (docs/phone-approval.md): the browser's side and the phone's side of
// `/v1/sign-in-requests`, as TouchstoneKit's `TouchstoneClient+SignInRequests.swift`.

/** `POST /v1/sign-in-requests`: asks the account's phone to approve a sign-in here (the browser's or a desktop app's side). */
suspend fun TouchstoneClient.startSignInRequest(email: String? = null, clientId: String? = null): StartedSignInRequest {
    val body = callWith("POST", "/v1/sign-in-requests", null, jsonOf("email" to email, "clientId" to clientId))
    return decoded("/v1/sign-in-requests") {
        StartedSignInRequest(body.string("requestId"), body.string("pollToken"), body.int("number"), body.string("expiresAt"), body.string("qr"))
    }
}

/** `GET /v1/sign-in-requests/{id}`, waiting up to [wait] seconds (0–30) for the phone's decision. */
suspend fun TouchstoneClient.signInRequestStatus(id: String, pollToken: String, wait: Int = 0): SignInRequestStatus {
    val path = "/v1/sign-in-requests/${TouchstoneClient.pathComponent(id)}?wait=${wait.coerceIn(0, 30)}"
    val body = callWith("GET", path, "Bearer $pollToken", null)
    return decoded("/v1/sign-in-requests/{id}") {
        val user = body.objOrNull("user")?.let(TouchstoneUser::from)
        val session = body.objOrNull("session")?.let(TouchstoneSessionInfo::from)
        SignInRequestStatus(body.string("status"), if (user != null && session != null) TouchstoneSession(user, session) else null)
    }
}

/** `POST /v1/biometrics/registrations/{id}/device-credential` (a session of the owner): a new device credential. */
suspend fun TouchstoneClient.issueDeviceCredential(token: String, registrationId: String): String {
    val body = call("POST", "${TouchstoneClient.registrationPath(registrationId)}/device-credential", token = token)
    return decoded("/v1/biometrics/registrations/{id}/device-credential") { body.string("deviceCredential") }
}

/** `GET /v1/sign-in-requests/pending` with the device credential: the requests waiting for the account's phones. */
suspend fun TouchstoneClient.pendingSignInRequests(registrationId: String, deviceCredential: String): List<SignInRequest> {
    val body = callWith("GET", "/v1/sign-in-requests/pending", deviceAuthorization(registrationId, deviceCredential), null)
    return decoded("/v1/sign-in-requests/pending") { body.array("requests").objects("requests").map(SignInRequest::from) }
}

/** `GET /v1/sign-in-requests/{id}?secret=` with the device credential: a request whose QR code the phone scanned. */
suspend fun TouchstoneClient.scannedSignInRequest(scanned: ScannedSignIn, registrationId: String, deviceCredential: String): SignInRequest {
    val path = "/v1/sign-in-requests/${TouchstoneClient.pathComponent(scanned.requestId)}?secret=" +
        URLEncoder.encode(scanned.secret, "UTF-8").replace("+", "%20")
    val body = callWith("GET", path, deviceAuthorization(registrationId, deviceCredential), null)
    return decoded("/v1/sign-in-requests/{id}") { SignInRequest.from(body) }
}

/** `POST /v1/sign-in-requests/{id}/approve` or `/decline` with the device key's signature over the payload and [decision]. */
suspend fun TouchstoneClient.decideSignInRequest(id: String, registrationId: String, decision: SignInDecision, signature: ByteArray) {
    val encoded = TouchstoneClient.base64Url(signature)
    val base = "/v1/sign-in-requests/${TouchstoneClient.pathComponent(id)}"
    when (decision) {
        is SignInDecision.Approve -> {
            // `choice` is sent as null for a backchannel request: the server reads its absence as a malformed body.
            val body = JSONObject().put("registrationId", registrationId).put("choice", decision.choice ?: JSONObject.NULL).put("signature", encoded)
            callWith("POST", "$base/approve", null, body)
        }
        is SignInDecision.Decline ->
            callWith("POST", "$base/decline", null, jsonOf("registrationId" to registrationId, "reason" to decision.reason.wire, "signature" to encoded))
    }
}

internal fun deviceAuthorization(registrationId: String, credential: String) = "Device $registrationId:$credential"
