package dev.touchstone.kit

/** An approved confirmation and its receipt (a `confirmation+jwt` the app's backend verifies with the JWKS). */
data class ApprovedConfirmation(val confirmation: ConfirmationInfo, val receipt: String)
