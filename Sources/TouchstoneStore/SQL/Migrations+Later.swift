// The schema's versions from 16 on (split from Migrations.swift to keep files short). Never edit a published
// version: append a new one.
extension Migrations {
    static let fromVersion16: [Migration] = [
        Migration(
            version: 16,
            name: "Webhook endpoints and their outbox",
            statements: [
                // An endpoint: its signing secret sealed under the key-encryption key (base64), the one before the
                // last rotation until it stops signing; events is the subscription as shown (comma-separated, '*').
                """
                CREATE TABLE webhook_endpoints (
                    id TEXT PRIMARY KEY,
                    url TEXT NOT NULL,
                    description TEXT NOT NULL,
                    events TEXT NOT NULL,
                    enabled BIGINT NOT NULL,
                    sealed_secret TEXT NOT NULL,
                    previous_sealed_secret TEXT,
                    previous_secret_expires_at BIGINT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    disabled_reason TEXT,
                    last_success_at BIGINT,
                    failing_since BIGINT
                )
                """,
                // What an endpoint subscribes to, one row per type ('*' for every type): what the outbox joins.
                """
                CREATE TABLE webhook_subscriptions (
                    event_type TEXT NOT NULL,
                    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
                    PRIMARY KEY (event_type, endpoint_id)
                )
                """,
                "CREATE INDEX webhook_subscriptions_endpoint ON webhook_subscriptions (endpoint_id)",
                // The outbox: one row per event and endpoint, written in the transaction of the change it reports.
                // A dispatcher leases due rows (claim_token until claimed_until) and records each attempt.
                """
                CREATE TABLE webhook_messages (
                    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
                    event_id TEXT NOT NULL,
                    event_type TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    state TEXT NOT NULL,
                    attempts BIGINT NOT NULL,
                    round_attempts BIGINT NOT NULL,
                    round_started_at BIGINT NOT NULL,
                    next_attempt_at BIGINT,
                    claim_token TEXT,
                    claimed_until BIGINT,
                    delivered_at BIGINT,
                    last_status BIGINT,
                    last_error TEXT,
                    PRIMARY KEY (endpoint_id, event_id)
                )
                """,
                "CREATE INDEX webhook_messages_due ON webhook_messages (state, next_attempt_at)",
                "CREATE INDEX webhook_messages_endpoint ON webhook_messages (endpoint_id, state, created_at)",
                """
                CREATE TABLE webhook_attempts (
                    endpoint_id TEXT NOT NULL,
                    event_id TEXT NOT NULL,
                    number BIGINT NOT NULL,
                    attempted_at BIGINT NOT NULL,
                    status_code BIGINT,
                    latency_ms BIGINT NOT NULL,
                    error TEXT,
                    PRIMARY KEY (endpoint_id, event_id, number),
                    FOREIGN KEY (endpoint_id, event_id) REFERENCES webhook_messages(endpoint_id, event_id) ON DELETE CASCADE
                )
                """,
            ]
        ),
        Migration(
            version: 17,
            name: "Verified addresses, mailed codes and links, recovery codes, the mail queue",
            statements: [
                "ALTER TABLE users ADD COLUMN email_verified_at BIGINT",
                // One live code and link per user and purpose: a new one replaces the previous.
                """
                CREATE TABLE email_challenges (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    purpose TEXT NOT NULL,
                    email TEXT NOT NULL,
                    code_hash TEXT NOT NULL,
                    token_hash TEXT NOT NULL UNIQUE,
                    attempts BIGINT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    PRIMARY KEY (user_id, purpose)
                )
                """,
                "CREATE INDEX email_challenges_expiry ON email_challenges (expires_at)",
                """
                CREATE TABLE recovery_codes (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    code_hash TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    used_at BIGINT,
                    PRIMARY KEY (user_id, code_hash)
                )
                """,
                // The queue: the message sealed under the key-encryption key (base64), leased by one sender at a time.
                """
                CREATE TABLE mail_queue (
                    id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    sealed_message TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    state TEXT NOT NULL,
                    attempts BIGINT NOT NULL,
                    next_attempt_at BIGINT,
                    claim_token TEXT,
                    claimed_until BIGINT,
                    last_error TEXT
                )
                """,
                "CREATE INDEX mail_queue_due ON mail_queue (state, next_attempt_at)",
            ]
        ),
        Migration(
            version: 18,
            name: "Sign-ins approved on a phone: requests, device credentials and push tokens, CIBA clients",
            statements: [
                // One row per request, from a browser (number matching) or a client's backend (CIBA); decided once.
                """
                CREATE TABLE sign_in_requests (
                    id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    email TEXT,
                    user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                    client_id TEXT REFERENCES oauth_clients(id) ON DELETE CASCADE,
                    client_name TEXT NOT NULL,
                    binding_message TEXT,
                    scope TEXT,
                    poll_token_hash TEXT NOT NULL UNIQUE,
                    secret_hash TEXT,
                    number BIGINT,
                    choices TEXT NOT NULL,
                    browser_address TEXT,
                    browser_user_agent TEXT,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    status TEXT NOT NULL,
                    decided_at BIGINT,
                    registration_id TEXT,
                    reason TEXT,
                    signature TEXT,
                    redeemed_at BIGINT,
                    last_polled_at BIGINT
                )
                """,
                "CREATE INDEX sign_in_requests_email ON sign_in_requests (email, status, expires_at)",
                "CREATE INDEX sign_in_requests_user ON sign_in_requests (user_id, status, expires_at)",
                "CREATE INDEX sign_in_requests_expiry ON sign_in_requests (expires_at)",
                // A registration's device credential (its SHA-256) and push token; gone with the registration.
                """
                CREATE TABLE device_channels (
                    registration_id TEXT PRIMARY KEY REFERENCES registrations(id) ON DELETE CASCADE,
                    credential_hash TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    push_platform TEXT,
                    push_token TEXT,
                    push_updated_at BIGINT
                )
                """,
                "CREATE TABLE phone_approval_pauses (user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, until BIGINT NOT NULL)",
                "ALTER TABLE oauth_clients ADD COLUMN ciba BIGINT NOT NULL DEFAULT 0",
            ]
        ),
        Migration(
            version: 19,
            name: "Where and how each session was opened, and when it was last used (the user's list of sessions)",
            statements: [
                "ALTER TABLE sessions ADD COLUMN client_address TEXT",
                "ALTER TABLE sessions ADD COLUMN user_agent TEXT",
                // No new index: `sessions_user_id` finds a user's few sessions, and every sign-in writes each index.
                "ALTER TABLE sessions ADD COLUMN last_seen_at BIGINT",
            ]
        ),
        Migration(
            version: 20,
            name: "Back-channel logouts owed for the sessions of deleted accounts",
            statements: [
                // A deleted user's token families go with the user; what they still owed OpenID clients stays here (no
                // reference to the user, who is gone), delivered by the same loop.
                """
                CREATE TABLE oauth_logout_notices (
                    client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
                    session_id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    state TEXT NOT NULL,
                    attempts BIGINT NOT NULL DEFAULT 0,
                    next_at BIGINT,
                    error TEXT,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (client_id, session_id)
                )
                """,
                "CREATE INDEX oauth_logout_notices_due ON oauth_logout_notices (state, next_at)",
            ]
        ),
        Migration(
            version: 21,
            name: "Fresh strong authentication: when a password, a passkey with user verification or a device key was last proven",
            statements: [
                // The password's time was the only strong proof before; it stays one (SQLite 3.25+ and PostgreSQL
                // rename in place, keeping the values).
                "ALTER TABLE sessions RENAME COLUMN password_authenticated_at TO strong_authenticated_at",
            ]
        ),
        Migration(
            version: 22,
            name: "Sign-ups without a password, between their start and their finish",
            statements: [
                """
                CREATE TABLE pending_sign_ups (
                    id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    email TEXT NOT NULL,
                    display_name TEXT,
                    details TEXT,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX pending_sign_ups_expires_at ON pending_sign_ups (expires_at)",
            ]
        ),
        Migration(
            version: 23,
            name: "The jti of accepted DPoP proofs, until they expire",
            statements: [
                """
                CREATE TABLE dpop_proofs (
                    thumbprint TEXT NOT NULL,
                    jti TEXT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    PRIMARY KEY (thumbprint, jti)
                )
                """,
                "CREATE INDEX dpop_proofs_expires_at ON dpop_proofs (expires_at)",
            ]
        ),
        Migration(
            version: 24,
            name: "DPoP: codes and refresh tokens bound to a key's thumbprint, clients that must send proofs",
            statements: [
                "ALTER TABLE oauth_codes ADD COLUMN dpop_jkt TEXT",
                "ALTER TABLE oauth_token_families ADD COLUMN dpop_jkt TEXT",
                "ALTER TABLE oauth_clients ADD COLUMN dpop_bound BIGINT NOT NULL DEFAULT 0",
            ]
        ),
        Migration(
            version: 25,
            name: "DPoP: a registration's proof key (its thumbprint), never on two registrations",
            statements: [
                "ALTER TABLE registrations ADD COLUMN proof_jkt TEXT",
                // NULLs do not collide (SQLite and PostgreSQL alike): registrations without a proof key are unaffected.
                "CREATE UNIQUE INDEX registrations_proof_jkt ON registrations (proof_jkt)",
            ]
        ),
        Migration(
            version: 26,
            name: "Work promised before the answer (a reset mail, a sign-in code, a push), done from the record",
            statements: [
                """
                CREATE TABLE deferred_work (
                    id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    subject TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    attempts BIGINT NOT NULL DEFAULT 0,
                    claim_token TEXT,
                    claimed_until BIGINT
                )
                """,
                "CREATE INDEX deferred_work_due ON deferred_work (claimed_until, created_at)",
            ]
        ),
        Migration(
            version: 27,
            name: "Rows that serialise a per-key cap across instances",
            statements: [
                // One row per key (`sign_in_requests:<address>`): a transaction that checks and changes a count for the
                // key first upserts its row, which PostgreSQL keeps locked until commit, so two instances take turns.
                "CREATE TABLE serial_keys (key TEXT PRIMARY KEY)",
            ]
        ),
    ]
}
