/// The schema, as an ordered list of versions. Never edit a published version: append a new one.
///
/// The SQL is the common subset of SQLite and PostgreSQL: `TEXT`, `BIGINT` (times are milliseconds since 1970 UTC),
/// partial indexes, `RETURNING`.
enum Migrations {
    struct Migration: Sendable {
        var version: Int
        var name: String
        var statements: [String]
    }

    /// Every version in order: versions 1–15 here, the later ones in `Migrations+Later.swift`.
    static let all: [Migration] = [
        Migration(
            version: 1,
            name: "users, sessions, biometric registrations, challenges",
            statements: [
                """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY,
                    email TEXT NOT NULL UNIQUE,
                    display_name TEXT,
                    password_hash TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE sessions (
                    token_hash TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    idle_expires_at BIGINT NOT NULL,
                    authenticated_at BIGINT NOT NULL,
                    password_authenticated_at BIGINT,
                    methods TEXT NOT NULL,
                    registration_id TEXT,
                    revoked_at BIGINT
                )
                """,
                "CREATE INDEX sessions_user_id ON sessions (user_id)",
                "CREATE INDEX sessions_expires_at ON sessions (expires_at)",
                """
                CREATE TABLE registrations (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    device_id TEXT NOT NULL,
                    device_name TEXT,
                    algorithm TEXT NOT NULL,
                    public_key TEXT NOT NULL,
                    key_fingerprint TEXT NOT NULL,
                    status TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT,
                    status_changed_at BIGINT
                )
                """,
                "CREATE INDEX registrations_user_id ON registrations (user_id, created_at)",
                "CREATE INDEX registrations_key_fingerprint ON registrations (key_fingerprint, created_at)",
                "CREATE INDEX registrations_device_id ON registrations (device_id, status)",
                // One account per device: at most one active registration per device id, enforced by the database.
                "CREATE UNIQUE INDEX registrations_one_active_per_device ON registrations (device_id) WHERE status = 'active'",
                """
                CREATE TABLE challenges (
                    challenge TEXT PRIMARY KEY,
                    registration_id TEXT NOT NULL REFERENCES registrations(id) ON DELETE CASCADE,
                    purpose TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    consumed_at BIGINT
                )
                """,
                "CREATE INDEX challenges_registration_id ON challenges (registration_id, purpose, created_at)",
                "CREATE INDEX challenges_expires_at ON challenges (expires_at)",
            ]
        ),
        Migration(
            version: 2,
            name: "passkeys and WebAuthn challenges",
            statements: [
                """
                CREATE TABLE passkeys (
                    id TEXT PRIMARY KEY,
                    credential_id TEXT NOT NULL UNIQUE,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    name TEXT,
                    public_key TEXT NOT NULL,
                    algorithm BIGINT NOT NULL,
                    sign_count BIGINT NOT NULL,
                    aaguid TEXT NOT NULL,
                    backup_eligible BIGINT NOT NULL,
                    backed_up BIGINT NOT NULL,
                    attestation_format TEXT NOT NULL,
                    attestation_type TEXT NOT NULL,
                    clone_warnings BIGINT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT
                )
                """,
                "CREATE INDEX passkeys_user_id ON passkeys (user_id, created_at)",
                """
                CREATE TABLE webauthn_challenges (
                    challenge TEXT PRIMARY KEY,
                    purpose TEXT NOT NULL,
                    user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                    allow_credentials TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    consumed_at BIGINT
                )
                """,
                "CREATE INDEX webauthn_challenges_expires_at ON webauthn_challenges (expires_at)",
            ]
        ),
        Migration(
            version: 3,
            name: "App Attest keys",
            statements: [
                """
                CREATE TABLE app_attest_keys (
                    key_id TEXT PRIMARY KEY,
                    public_key TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    counter BIGINT NOT NULL,
                    receipt TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT
                )
                """,
                // The App Attest key that vouched for a registration (null: not attested).
                "ALTER TABLE registrations ADD COLUMN app_attest_key_id TEXT REFERENCES app_attest_keys(key_id)",
            ]
        ),
        Migration(
            version: 4,
            name: "registration lockout",
            statements: [
                "ALTER TABLE registrations ADD COLUMN failed_attempts BIGINT NOT NULL DEFAULT 0"
            ]
        ),
        Migration(
            version: 5,
            name: "passkey lockout",
            statements: [
                "ALTER TABLE passkeys ADD COLUMN failed_attempts BIGINT NOT NULL DEFAULT 0",
                "ALTER TABLE passkeys ADD COLUMN locked_at BIGINT",
            ]
        ),
        Migration(
            version: 6,
            name: "app PINs, audit events, rate limits, login throttling, admin keys, runtime policy",
            statements: [
                // The app PIN of a registration: a bcrypt hash, never the PIN.
                "ALTER TABLE registrations ADD COLUMN pin_hash TEXT",
                "ALTER TABLE registrations ADD COLUMN pin_set_at BIGINT",
                "ALTER TABLE registrations ADD COLUMN pin_failed_attempts BIGINT NOT NULL DEFAULT 0",
                "ALTER TABLE registrations ADD COLUMN pin_disabled_at BIGINT",
                // No foreign keys: the trail outlives the users, registrations and passkeys it names.
                """
                CREATE TABLE audit_events (
                    id TEXT PRIMARY KEY,
                    occurred_at BIGINT NOT NULL,
                    type TEXT NOT NULL,
                    outcome TEXT NOT NULL,
                    user_id TEXT,
                    registration_id TEXT,
                    passkey_id TEXT,
                    client_address TEXT,
                    user_agent TEXT,
                    reason TEXT
                )
                """,
                "CREATE INDEX audit_events_occurred_at ON audit_events (occurred_at, id)",
                "CREATE INDEX audit_events_user_id ON audit_events (user_id, occurred_at, id)",
                // Token buckets as GCRA: one "theoretical arrival time" per key.
                "CREATE TABLE rate_limits (bucket TEXT PRIMARY KEY, tat BIGINT NOT NULL)",
                "CREATE INDEX rate_limits_tat ON rate_limits (tat)",
                "CREATE TABLE login_failures (bucket TEXT PRIMARY KEY, failures BIGINT NOT NULL, last_failure_at BIGINT NOT NULL)",
                "CREATE INDEX login_failures_last_failure_at ON login_failures (last_failure_at)",
                """
                CREATE TABLE admin_keys (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    key_hash TEXT NOT NULL UNIQUE,
                    created_at BIGINT NOT NULL,
                    revoked_at BIGINT
                )
                """,
                "CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at BIGINT NOT NULL)",
            ]
        ),
        Migration(
            version: 7,
            name: "failed credential checks per client address",
            statements: [
                // Failed password and PIN checks per client address, counted in a window; blocked_until is set when the
                // count reaches the limit. Kept in the database so that every instance sees the same block.
                """
                CREATE TABLE address_failures (
                    address TEXT PRIMARY KEY,
                    failures BIGINT NOT NULL,
                    window_started_at BIGINT NOT NULL,
                    last_failure_at BIGINT NOT NULL,
                    blocked_until BIGINT
                )
                """,
                "CREATE INDEX address_failures_blocked_until ON address_failures (blocked_until)",
                "CREATE INDEX address_failures_last_failure_at ON address_failures (last_failure_at)",
            ]
        ),
        Migration(
            version: 8,
            name: "token signing keys; session ids",
            statements: [
                // The key set that signs access tokens (and receipts): shared by every instance, private keys sealed
                // with the key-encryption key (AES-256-GCM, the kid as associated data). `generation` orders the keys
                // and makes concurrent creation by two instances a conflict instead of two keys.
                """
                CREATE TABLE signing_keys (
                    kid TEXT PRIMARY KEY,
                    generation BIGINT NOT NULL UNIQUE,
                    algorithm TEXT NOT NULL,
                    public_jwk TEXT NOT NULL,
                    sealed_private_key TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    activates_at BIGINT NOT NULL
                )
                """,
                // A stable, non-secret session identifier for tokens (`sid`); sessions from before get one on first use.
                "ALTER TABLE sessions ADD COLUMN id TEXT",
                "CREATE UNIQUE INDEX sessions_id ON sessions (id)",
            ]
        ),
        Migration(
            version: 9,
            name: "transaction confirmations",
            statements: [
                // A confirmation and, once decided, how: the approval's evidence (payload, signature, key, and for a
                // passkey what the authenticator signed) stays with it, so it can be checked without the server.
                """
                CREATE TABLE confirmations (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    summary TEXT NOT NULL,
                    details TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    created_by TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    status TEXT NOT NULL,
                    decided_at BIGINT,
                    method TEXT,
                    registration_id TEXT,
                    passkey_id TEXT,
                    algorithm TEXT,
                    public_key TEXT,
                    signature TEXT,
                    authenticator_data TEXT,
                    client_data_json TEXT
                )
                """,
                "CREATE INDEX confirmations_user_id ON confirmations (user_id, created_at)",
            ]
        ),
        Migration(
            version: 10,
            name: "Android key attestation",
            statements: [
                // What the Keystore attestation of an Android device key established (null: not attested).
                "ALTER TABLE registrations ADD COLUMN key_attestation_level TEXT",
                "ALTER TABLE registrations ADD COLUMN key_attestation_package TEXT",
            ]
        ),
        Migration(
            version: 11,
            name: "device-bound passkey policy",
            statements: [
                // 1: this account's passkeys must be device-bound (not backup eligible).
                "ALTER TABLE users ADD COLUMN require_device_bound_passkeys BIGINT NOT NULL DEFAULT 0"
            ]
        ),
        Migration(
            version: 12,
            name: "how passkeys are made",
            statements: [
                // modal (the browser's dialog) or conditional (an automatic upgrade after a password sign-in).
                "ALTER TABLE passkeys ADD COLUMN created_via TEXT NOT NULL DEFAULT 'modal'"
            ]
        ),
        Migration(
            version: 13,
            name: "authenticator metadata",
            statements: [
                // The FIDO Metadata Service BLOB in use (one row, name 'fido-mds'), shared by every instance: the JWS
                // as verified, its serial number (a row is only ever replaced by a larger one) and nextUpdate.
                """
                CREATE TABLE authenticator_metadata (
                    name TEXT PRIMARY KEY,
                    number BIGINT NOT NULL,
                    next_update BIGINT NOT NULL,
                    blob TEXT NOT NULL,
                    source TEXT NOT NULL,
                    stored_at BIGINT NOT NULL
                )
                """,
                // A passkey's attestation certificate key identifier (how metadata names U2F authenticators).
                "ALTER TABLE passkeys ADD COLUMN attestation_key_id TEXT",
                "CREATE INDEX passkeys_aaguid ON passkeys (aaguid)",
            ]
        ),
        Migration(
            version: 14,
            name: "OpenID Connect clients",
            statements: [
                // A registered client: its secret only as a SHA-256 hash (NULL for a public client), its URIs as
                // newline-separated lists (a URI has no white space).
                """
                CREATE TABLE oauth_clients (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    secret_hash TEXT,
                    redirect_uris TEXT NOT NULL,
                    post_logout_redirect_uris TEXT NOT NULL,
                    backchannel_logout_uri TEXT,
                    first_party BIGINT NOT NULL,
                    created_at BIGINT NOT NULL,
                    secret_rotated_at BIGINT
                )
                """
            ]
        ),
        Migration(
            version: 15,
            name: "OpenID Connect codes, token families, refresh tokens, consents",
            statements: [
                // How a session's passkey sign-in stood (OpenID EAP ACR: 'phr', or 'phrh' for a device-bound passkey).
                "ALTER TABLE sessions ADD COLUMN acr TEXT",
                // An authorization code, by its SHA-256 hash: bound to the client, the redirect URI, the PKCE
                // challenge, the nonce and the sign-in; single use (used_at), valid until expires_at. family_id names
                // the token family its exchange starts (and a replay revokes).
                """
                CREATE TABLE oauth_codes (
                    code_hash TEXT PRIMARY KEY,
                    client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    session_id TEXT NOT NULL,
                    redirect_uri TEXT NOT NULL,
                    code_challenge TEXT NOT NULL,
                    nonce TEXT,
                    scope TEXT NOT NULL,
                    auth_time BIGINT NOT NULL,
                    amr TEXT NOT NULL,
                    acr TEXT,
                    family_id TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    used_at BIGINT
                )
                """,
                "CREATE INDEX oauth_codes_expires_at ON oauth_codes (expires_at)",
                // The tokens one authorization gave a client: its refresh tokens and access tokens live while the
                // family is not revoked and its session has not ended. When the session ends, logout_state becomes
                // 'pending' for a client with a back-channel logout URI, then 'delivered' or 'abandoned'.
                """
                CREATE TABLE oauth_token_families (
                    id TEXT PRIMARY KEY,
                    client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    session_id TEXT NOT NULL,
                    scope TEXT NOT NULL,
                    auth_time BIGINT NOT NULL,
                    amr TEXT NOT NULL,
                    acr TEXT,
                    created_at BIGINT NOT NULL,
                    revoked_at BIGINT,
                    session_ended_at BIGINT,
                    logout_state TEXT,
                    logout_attempts BIGINT NOT NULL DEFAULT 0,
                    logout_next_at BIGINT,
                    logout_error TEXT
                )
                """,
                "CREATE INDEX oauth_token_families_session ON oauth_token_families (session_id)",
                "CREATE INDEX oauth_token_families_user_client ON oauth_token_families (user_id, client_id)",
                "CREATE INDEX oauth_token_families_logout ON oauth_token_families (logout_state, logout_next_at)",
                // A refresh token, by its SHA-256 hash; used once (rotation), then kept to recognise a reuse.
                """
                CREATE TABLE oauth_refresh_tokens (
                    token_hash TEXT PRIMARY KEY,
                    family_id TEXT NOT NULL REFERENCES oauth_token_families(id) ON DELETE CASCADE,
                    scope TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    used_at BIGINT
                )
                """,
                "CREATE INDEX oauth_refresh_tokens_family ON oauth_refresh_tokens (family_id)",
                // Access tokens revoked before their expiry (RFC 7009), by jti, kept until they would have expired.
                "CREATE TABLE oauth_revoked_access_tokens (jti TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
                // What a user allowed a third-party client: the scopes, space-separated.
                """
                CREATE TABLE oauth_consents (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
                    scope TEXT NOT NULL,
                    granted_at BIGINT NOT NULL,
                    PRIMARY KEY (user_id, client_id)
                )
                """,
            ]
        ),
    ] + Self.fromVersion16
}
