package dev.touchstone.kit

/** Asks the user for the app PIN; null when they cancel. */
fun interface PinProvider {
    /** The PIN the user typed for [request], or null when they cancel. */
    suspend fun pin(request: PinRequest): String?
}
