package dev.touchstone.kit

import org.json.JSONObject

/**
 * The payload of a [SignInRequest]: the request, the account, who asks and until when. The phone signs it with its
 * decision as RFC 8785 canonical JSON ([signedBytes]), so the signature names the request and the account.
 *
 * @property kind `sign_in` (a browser) or `backchannel` (CIBA).
 * @property expiresAt RFC 3339.
 */
data class SignInRequestPayload(
    val requestId: String,
    val kind: String,
    val rpId: String,
    val userId: String,
    val client: String,
    val expiresAt: String,
    val browserAddress: String?,
    val browserUserAgent: String?,
    val bindingMessage: String?,
    val version: Int,
) {
    /** The exact bytes this phone signs for [decision] (the server's `SignInApproval.Payload.signedBytes`). */
    fun signedBytes(decision: SignInDecision): ByteArray {
        val members = LinkedHashMap<String, Any?>()
        members["client"] = client
        members["expiresAt"] = expiresAt
        members["kind"] = kind
        members["requestId"] = requestId
        members["rpId"] = rpId
        members["userId"] = userId
        members["version"] = version
        if (kind == BACKCHANNEL_KIND) {
            members["bindingMessage"] = bindingMessage
        } else if (browserAddress != null && browserUserAgent != null) {
            members["browser"] = mapOf("address" to browserAddress, "userAgent" to browserUserAgent)
        }
        when (decision) {
            is SignInDecision.Approve -> {
                members["decision"] = "approve"
                members["choice"] = decision.choice
            }
            is SignInDecision.Decline -> {
                members["decision"] = "decline"
                members["choice"] = null
                members["reason"] = decision.reason.wire
            }
        }
        return CanonicalJson.serialize(members)
    }

    internal companion object {
        const val SIGN_IN_KIND = "sign_in"
        const val BACKCHANNEL_KIND = "backchannel"

        fun from(json: JSONObject): SignInRequestPayload {
            val browser = json.objOrNull("browser")
            return SignInRequestPayload(
                requestId = json.string("requestId"),
                kind = json.string("kind"),
                rpId = json.string("rpId"),
                userId = json.string("userId"),
                client = json.string("client"),
                expiresAt = json.string("expiresAt"),
                browserAddress = browser?.string("address"),
                browserUserAgent = browser?.string("userAgent"),
                bindingMessage = json.stringOrNull("bindingMessage"),
                version = json.int("version"),
            )
        }
    }
}
