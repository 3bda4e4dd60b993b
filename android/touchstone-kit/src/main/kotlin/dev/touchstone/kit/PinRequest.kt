package dev.touchstone.kit

/**
 * What a [PinProvider] is told when [BiometricLogin.signIn] falls back to the app PIN.
 *
 * @property trigger Why: `USER_FALLBACK` (the user chose the negative button) or `LOCKED_OUT`.
 * @property attempt 1 for the first PIN asked, 2 after a wrong one...
 * @property previousError The previous attempt's error (`PIN_INCORRECT`), to show "wrong PIN".
 */
data class PinRequest(val trigger: TouchstoneErrorCode, val attempt: Int, val previousError: TouchstoneException?)
