package dev.touchstone.kit

// Sign-in approved on the phone: the phone's side, as TouchstoneKit's `BiometricLogin+SignIn.swift`.

/**
 * The sign-in requests waiting for this phone: a browser on a computer, or an app's backend (CIBA). Never prompts:
 * reading uses the device credential kept since enrolment.
 *
 * ```kotlin
 * for (request in biometrics.pendingSignInRequests()) {
 *     val picked = showNumbers(request.numbers, request.client)          // null: "It wasn't me"
 *     if (picked != null) biometrics.approveSignIn(request, picked)
 *     else biometrics.declineSignIn(request, SignInDeclineReason.NOT_ME)
 * }
 * ```
 *
 * @throws TouchstoneException `NOT_ENABLED`, `DEVICE_CREDENTIAL_INVALID` (none stored, or refused: [renewDeviceCredential]),
 * `REGISTRATION_LOCKED`, `SERVER`, `TRANSPORT`.
 */
suspend fun BiometricLogin.pendingSignInRequests(): List<SignInRequest> = gate.withLock {
    val (enrollment, credential) = deviceCredential()
    // Only what is for this account can be shown (the server sends nothing else).
    client.pendingSignInRequests(enrollment.registrationId, credential).filter { it.payload.userId == enrollment.userId }
}

/**
 * Approves a sign-in: checks the request is for this account and [choice] one of its numbers, shows the prompt, signs
 * the payload with the decision, and sends it.
 *
 * @param choice The number the user picked (null for a backchannel request, which has none).
 * @throws TouchstoneException `SIGN_IN_REQUEST_MISMATCH` (nothing was signed), `WRONG_NUMBER` (the server declined
 * the request), `SIGN_IN_REQUEST_EXPIRED`, `SIGN_IN_REQUEST_NOT_PENDING`, prompt outcomes, `REGISTRATION_REVOKED`.
 */
suspend fun BiometricLogin.approveSignIn(request: SignInRequest, choice: Int?) = gate.withLock { approve(request, choice) }

/**
 * Declines a sign-in; [SignInDeclineReason.NOT_ME] tells the app's backend someone else tried. The decision is signed
 * too, after the prompt, so that only this phone can decline.
 */
suspend fun BiometricLogin.declineSignIn(request: SignInRequest, reason: SignInDeclineReason) = gate.withLock {
    decide(request, SignInDecision.Decline(reason), if (reason == SignInDeclineReason.NOT_ME) "Report this sign-in" else "Decline this sign-in")
}

/**
 * Reads a request whose QR code the phone scanned (`touchstone://sign-in?...`), for this server only: a code for
 * another server is refused before anything is sent.
 *
 * @throws TouchstoneException `SIGN_IN_REQUEST_MISMATCH` (not a sign-in code, or for another server), and as
 * [pendingSignInRequests].
 */
suspend fun BiometricLogin.signInRequest(scannedUrl: String): SignInRequest = gate.withLock { scanned(scannedUrl) }

/**
 * Reads a scanned request, lets the user pick the number the computer shows ([choose] gets the numbers; null
 * declines with `CANCEL`), and approves it.
 */
suspend fun BiometricLogin.approveSignIn(scannedUrl: String, choose: suspend (List<Int>) -> Int?) = gate.withLock {
    val request = scanned(scannedUrl)
    if (!request.needsNumber) return@withLock approve(request, null)
    val choice = choose(request.numbers)
    if (choice == null) decide(request, SignInDecision.Decline(SignInDeclineReason.CANCEL), "Decline this sign-in")
    else approve(request, choice)
}

/**
 * Gets a new device credential for this device's registration (one enrolled before they existed, or after the
 * server refused the stored one) with a session of its account.
 */
suspend fun BiometricLogin.renewDeviceCredential(session: TouchstoneSession) = gate.withLock {
    val enrollment = loadEnrollmentOrNull()?.takeIf { it.userId == session.user.id }
        ?: throw TouchstoneException.notEnabled(NotEnabledReason.NEVER_ENABLED, "biometric sign-in is not enabled for this account on this device")
    val credential = client.issueDeviceCredential(session.session.token, enrollment.registrationId)
    stateStore.saveDeviceCredential(credential, enrollment.registrationId)
}

private suspend fun BiometricLogin.approve(request: SignInRequest, choice: Int?) {
    if (request.needsNumber) {
        if (choice == null || choice !in request.numbers) throw requestMismatch("pick one of the numbers offered")
    } else if (choice != null) {
        throw requestMismatch("this request has no number: check its binding message instead")
    }
    decide(request, SignInDecision.Approve(choice), "Sign in to ${request.client}?")
}

private suspend fun BiometricLogin.decide(request: SignInRequest, decision: SignInDecision, reason: String) {
    val enrollment = requireEnrollmentWithKey()
    val payload = request.payload
    if (payload.userId != enrollment.userId || payload.requestId != request.requestId || payload.version != 1) {
        throw requestMismatch("the request is for another account than this device's")
    }
    try {
        val signature = signWithPrompt(enrollment.keyTag, enrollment.policy, reason, payload.signedBytes(decision), enrollment)
        client.decideSignInRequest(request.requestId, enrollment.registrationId, decision, signature)
    } catch (e: TouchstoneException) {
        throw handleSignInError(e, enrollment)
    }
}

private suspend fun BiometricLogin.scanned(scannedUrl: String): SignInRequest {
    val scanned = ScannedSignIn.parse(scannedUrl) ?: throw requestMismatch("this is not a Touchstone sign-in code")
    val base = client.transport.serverUrl
    if (base == null || !ScannedSignIn.sameOrigin(scanned.server, base)) {
        throw requestMismatch("this sign-in code is for another server (${scanned.server})")
    }
    val (enrollment, credential) = deviceCredential()
    val request = client.scannedSignInRequest(scanned, enrollment.registrationId, credential)
    if (request.payload.userId != enrollment.userId || request.requestId != scanned.requestId) {
        throw requestMismatch("the scanned request is not for this account")
    }
    return request
}

private suspend fun BiometricLogin.deviceCredential(): Pair<LocalEnrollment, String> {
    val enrollment = requireEnrollment()
    val credential = try {
        stateStore.loadDeviceCredential(enrollment.registrationId)
    } catch (e: LocalStateUnreadableException) {
        null
    } ?: throw TouchstoneException.Enrollment(TouchstoneErrorCode.DEVICE_CREDENTIAL_INVALID, "no device credential is stored: renew it with a session")
    return enrollment to credential
}

private fun requestMismatch(message: String) = TouchstoneException.SignInRequest(TouchstoneErrorCode.SIGN_IN_REQUEST_MISMATCH, message)
