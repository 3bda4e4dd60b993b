package dev.touchstone.kit

/**
 * What a password reset did (`POST /v1/password-resets/confirm`).
 *
 * @property revokedSessions How many sessions of the account ended (all of them).
 * @property signedIn A new session, unless the account has passkeys or device keys: then its user signs in again.
 */
data class PasswordReset(val user: TouchstoneUser, val revokedSessions: Int, val signedIn: TouchstoneSession?)
