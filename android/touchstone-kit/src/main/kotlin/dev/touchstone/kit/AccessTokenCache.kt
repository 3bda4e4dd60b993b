package dev.touchstone.kit

/** The access tokens a client holds, by session; one fetch at a time, so callers asking together share one. */
internal class AccessTokenCache(private val now: () -> Long) {
    private val gate = SerialGate()
    private val tokens = HashMap<String, AccessToken>()

    suspend fun token(session: String, minimumLifetimeMillis: Long, fetch: suspend () -> AccessToken): AccessToken = gate.withLock {
        val cached = tokens[session]
        if (cached != null && cached.expiresAtMillis - now() > minimumLifetimeMillis) return@withLock cached
        try {
            val token = fetch()
            val current = now()
            tokens.entries.removeAll { it.value.expiresAtMillis <= current }
            tokens[session] = token
            token
        } catch (e: TouchstoneException) {
            // A session that ended has no token worth keeping.
            tokens.remove(session)
            throw e
        }
    }
}
