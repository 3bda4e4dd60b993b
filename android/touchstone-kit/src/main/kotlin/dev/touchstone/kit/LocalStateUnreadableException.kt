package dev.touchstone.kit

/** The stored state cannot be read back (undecryptable or damaged). */
class LocalStateUnreadableException(message: String, cause: Throwable? = null) : Exception(message, cause)
