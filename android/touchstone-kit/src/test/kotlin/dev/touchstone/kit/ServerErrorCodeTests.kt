package dev.touchstone.kit

import org.junit.Assert.assertEquals
import org.junit.Test

/**
 * Every server error code the SDK maps to a code of its own (the table TouchstoneKit shares), each triggered against
 * a real server and read back as its SDK code. A server of this class's own has rate limits on and a 10-second
 * sign-in request lifetime; expiry is awaited by polling the server, never by a fixed sleep.
 */
class ServerErrorCodeTests {
    private val shared = TestServer.shared

    private fun enabled(server: TestServer): Pair<TestServer.Phone, TouchstoneSession> {
        val phone = server.phone()
        val account = server.newAccount(phone.client)
        blocking { phone.biometrics.enable(account) }
        return phone to account
    }

    private inline fun catching(block: () -> Unit): TouchstoneException = try {
        block()
        throw AssertionError("nothing was thrown")
    } catch (e: TouchstoneException) {
        e
    }

    /** Polls [read] until it is true, up to a generous limit (the server decides when things expire). */
    private fun await(what: String, read: () -> Boolean) {
        val deadline = System.nanoTime() + 90_000_000_000L
        while (!read()) {
            if (System.nanoTime() > deadline) throw AssertionError("$what did not happen within 90 s")
            Thread.sleep(250)
        }
    }

    private val triggers: Map<String, () -> TouchstoneException> = mapOf(
        "registration_revoked" to {
            val (phone, account) = enabled(shared)
            blocking { phone.client.deleteRegistration(account.session.token, phone.client.registrations(account.session.token).single().id) }
            catching { blocking { phone.biometrics.signIn("Sign in") } }
        },
        "registration_locked" to {
            val (phone, account) = enabled(shared)
            val id = blocking { phone.client.registrations(account.session.token) }.single().id
            repeat(5) {
                runCatching { blocking { phone.client.finishAuthentication(id, phone.client.startAuthentication(id).challenge, ByteArray(64)) } }
            }
            catching { blocking { phone.biometrics.signIn("Sign in") } }
        },
        "invalid_pin" to {
            val (phone, account) = enabled(shared)
            blocking { phone.biometrics.setPin("2468", account) }
            catching { blocking { phone.biometrics.signInWithPin("1357") } }
        },
        "pin_disabled" to {
            val (phone, account) = enabled(shared)
            blocking { phone.biometrics.setPin("2468", account) }
            repeat(3) { runCatching { blocking { phone.biometrics.signInWithPin("1357") } } }
            catching { blocking { phone.biometrics.signInWithPin("2468") } }
        },
        "pin_not_set" to {
            val (phone, _) = enabled(shared)
            catching { blocking { phone.biometrics.signInWithPin("2468") } }
        },
        "rate_limited" to {
            val (phone, _) = enabled(strict)
            // The per-registration allowance (8 calls a minute here, two a sign-in) runs out on the fifth sign-in.
            catching { repeat(10) { blocking { phone.biometrics.signIn("Sign in") } } }
        },
        "login_throttled" to {
            val client = strict.client()
            val email = strict.newAccount(client).user.email
            catching { repeat(10) { runCatching { blocking { client.signIn(email, "wrong password!") } }.exceptionOrNull()?.let { if ((it as TouchstoneException).serverCode == "login_throttled") throw it } } }
        },
        "confirmation_expired" to {
            val (phone, request) = expiring.confirmation
            await("the confirmation's expiry") { blocking { phone.client.confirmationRequest(request.id, expiring.confirmationAccount.session.token) }.first.status == "expired" }
            catching { blocking { phone.biometrics.confirm(request) } }
        },
        "confirmation_not_pending" to {
            val (phone, account) = enabled(shared)
            val request = blocking { phone.client.createConfirmation("Twice", token = account.session.token) }
            blocking { phone.biometrics.confirm(request) }
            catching { blocking { phone.biometrics.confirm(request) } }
        },
        "sign_in_request_expired" to {
            val (phone, request, started) = expiring.signIn
            await("the sign-in request's expiry") { blocking { strict.client().signInRequestStatus(started.requestId, started.pollToken) }.status == "expired" }
            catching { blocking { phone.biometrics.approveSignIn(request, started.number) } }
        },
        "sign_in_request_not_pending" to {
            val (phone, account) = enabled(shared)
            val started = blocking { shared.client().startSignInRequest(account.user.email) }
            val request = blocking { phone.biometrics.pendingSignInRequests() }.single()
            blocking { phone.biometrics.declineSignIn(request, SignInDeclineReason.CANCEL) }
            catching { blocking { phone.biometrics.approveSignIn(request, started.number) } }
        },
        "wrong_number" to {
            val (phone, account) = enabled(shared)
            val started = blocking { shared.client().startSignInRequest(account.user.email) }
            val request = blocking { phone.biometrics.pendingSignInRequests() }.single()
            catching { blocking { phone.biometrics.approveSignIn(request, request.numbers.first { it != started.number }) } }
        },
        "invalid_device_credential" to {
            val (phone, account) = enabled(shared)
            blocking { phone.state.saveDeviceCredential("x".repeat(43), phone.client.registrations(account.session.token).single().id) }
            catching { blocking { phone.biometrics.pendingSignInRequests() } }
        },
    )

    @Test fun `every server code the SDK maps has a trigger here`() {
        assertEquals(TouchstoneClient.errorCodes.keys, triggers.keys)
    }

    @Test fun `each mapped server code reaches the app as its own SDK code`() {
        expiring.toString() // start the clocks of both expiring items before the other triggers run
        for ((serverCode, trigger) in triggers) {
            val error = try {
                trigger()
            } catch (e: AssertionError) {
                throw AssertionError("$serverCode: ${e.message}", e)
            }
            assertEquals("$serverCode: $error", serverCode, error.serverCode)
            assertEquals(serverCode, TouchstoneClient.errorCodes[serverCode], error.code)
            // The exception's group is the one its code belongs to.
            assertEquals(serverCode, TouchstoneException.of(error.code, "").javaClass, error.javaClass)
        }
    }

    private companion object {
        val strict: TestServer by lazy {
            TestServer.start(mapOf(
                "TOUCHSTONE_RATE_LIMITS" to "on",
                "TOUCHSTONE_RATE_LIMIT_PER_ACCOUNT" to "8/minute",
                "TOUCHSTONE_SIGN_IN_REQUEST_TTL_SECONDS" to "10",
            ))
        }

        /** A confirmation and a sign-in request made with the shortest lifetimes, read before they expire. */
        val expiring by lazy { Expiring() }
    }

    private class Expiring {
        val confirmationAccount: TouchstoneSession
        val confirmation: Pair<TestServer.Phone, ConfirmationRequest>
        val signIn: Triple<TestServer.Phone, SignInRequest, StartedSignInRequest>

        init {
            val phone = strict.phone()
            confirmationAccount = strict.newAccount(phone.client)
            blocking { phone.biometrics.enable(confirmationAccount) }
            confirmation = phone to blocking { phone.client.createConfirmation("Soon gone", ttlSeconds = 10, token = confirmationAccount.session.token) }
            val started = blocking { strict.client().startSignInRequest(confirmationAccount.user.email) }
            signIn = Triple(phone, blocking { phone.biometrics.pendingSignInRequests() }.single(), started)
        }
    }
}
