package dev.touchstone.kit

/**
 * What the app asks the user to approve: the confirmation's id and summary as the app got them, and the payload the
 * server made (the exact text the device signs).
 */
data class ConfirmationRequest(val id: String, val summary: String, val payload: String)
