package dev.touchstone.kit

/** What kind of [TouchstoneException.Transport] failure. */
enum class TransportFailure {
    /** No connection (no network, refused, TLS failure). */
    UNREACHABLE,
    /** Connected, but no answer in time. */
    TIMEOUT,
    /** An answer that is not the JSON the API promises (an HTML error page, wrong types, missing fields). */
    UNREADABLE,
    /** An answer larger than the transport accepts. */
    TOO_LARGE,
}
