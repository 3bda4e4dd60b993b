#!/usr/bin/env python3
"""Prints SQLite's plan for every statement of a sign-in, to show that none scans a table.

Usage: scripts/query_plans.py DATABASE.sqlite   (a Touchstone database, ideally a large one: `touchstone bench seed`)
The statements are those of Sources/TouchstoneStore/SQL/SQLTouchstoneStore.swift on the sign-in paths.
"""
import sqlite3
import sys

STATEMENTS = {
    "biometric start: the registration's status, user and key (signInRegistration; the challenge is not stored)": "SELECT id, "
    "user_id, status, algorithm, public_key FROM registrations WHERE id = ?",
    "biometric finish, signature checked first: record the challenge, return the user (completeSignIn)": "INSERT INTO "
    "challenges (challenge, registration_id, purpose, created_at, expires_at, consumed_at) SELECT ?, r.id, ?, ?, ?, ? "
    "FROM registrations r JOIN users u ON u.id = r.user_id WHERE r.id = ? AND r.user_id = ? AND r.status = 'active' "
    "ON CONFLICT (challenge) DO NOTHING RETURNING (SELECT id FROM users WHERE id = ?) AS user__id, "
    "(SELECT email FROM users WHERE id = ?) AS user__email",
    "biometric finish, key not held: registration, user and whether the challenge was answered (signInAttempt)": "SELECT r.*, "
    "u.id AS user__id, u.email AS user__email, c.challenge AS answered_challenge "
    "FROM registrations r LEFT JOIN users u ON u.id = r.user_id LEFT JOIN challenges c ON c.challenge = ? WHERE r.id = ?",
    "biometric finish, wrong signature: record the challenge (recordAnsweredChallenge)": "INSERT INTO challenges "
    "(challenge, registration_id, purpose, created_at, expires_at, consumed_at) SELECT ?, id, ?, ?, ?, ? FROM registrations "
    "WHERE id = ? ON CONFLICT (challenge) DO NOTHING RETURNING challenge",
    "biometric finish: record use (completeSignIn)": "UPDATE registrations SET last_used_at = ? WHERE id = ?",
    "passkey verify: passkey, its user and whether the challenge was answered (passkeySignInAttempt; options store "
    "nothing)": "SELECT p.*, u.id AS user__id, u.email AS user__email, w.challenge AS answered_challenge FROM passkeys p "
    "LEFT JOIN users u ON u.id = p.user_id LEFT JOIN webauthn_challenges w ON w.challenge = ? WHERE p.credential_id = ?",
    "passkey verify: record the challenge (completePasskeySignIn, recordAnsweredWebAuthnChallenge)": "INSERT INTO "
    "webauthn_challenges (challenge, purpose, user_id, allow_credentials, created_at, expires_at, consumed_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (challenge) DO NOTHING RETURNING challenge",
    "passkey verify: record use (completePasskeySignIn)": "UPDATE passkeys SET sign_count = CASE WHEN sign_count < ? "
    "THEN ? ELSE sign_count END, backed_up = ?, clone_warnings = clone_warnings + ?, last_used_at = ? WHERE id = ?",
    "passkey options with an email: user by email": "SELECT * FROM users WHERE email = ?",
    "every authenticated call: session by token hash": "SELECT * FROM sessions WHERE token_hash = ?",
    "every authenticated call: refresh idle deadline": "UPDATE sessions SET idle_expires_at = ? WHERE token_hash = ?",
    "rate limit: take a token (takeRateLimitToken)": "INSERT INTO rate_limits (bucket, tat) VALUES (?, ?) "
    "ON CONFLICT (bucket) DO UPDATE SET tat = (CASE WHEN rate_limits.tat > ? THEN rate_limits.tat ELSE ? END) + ? "
    "WHERE (CASE WHEN rate_limits.tat > ? THEN rate_limits.tat ELSE ? END) + ? - ? <= ? RETURNING tat",
    "password and PIN sign-in: address block (addressBlock)": "SELECT address, failures, last_failure_at, blocked_until "
    "FROM address_failures WHERE address = ? AND blocked_until > ?",
    "failed password or PIN: count per address (recordFailedCredentialCheck)": "INSERT INTO address_failures (address, "
    "failures, window_started_at, last_failure_at, blocked_until) VALUES (?, 1, ?, ?, ?) ON CONFLICT (address) DO UPDATE "
    "SET failures = CASE WHEN address_failures.window_started_at < ? THEN 1 ELSE address_failures.failures + 1 END, "
    "window_started_at = CASE WHEN address_failures.window_started_at < ? THEN ? ELSE address_failures.window_started_at END, "
    "last_failure_at = ?, blocked_until = CASE WHEN (CASE WHEN address_failures.window_started_at < ? THEN 1 "
    "ELSE address_failures.failures + 1 END) >= ? THEN ? ELSE address_failures.blocked_until END "
    "RETURNING address, failures, last_failure_at, blocked_until",
    "password sign-in: login failures": "SELECT failures, last_failure_at FROM login_failures WHERE bucket = ?",
    "PIN sign-in: count the attempt (beginPinAttempt)": "UPDATE registrations SET pin_failed_attempts = pin_failed_attempts + 1 "
    "WHERE id = ? AND status = 'active' AND pin_hash IS NOT NULL AND pin_disabled_at IS NULL AND pin_failed_attempts < ? "
    "RETURNING pin_hash, user_id",
    "sign-in: audit event (insertAuditEvent)": "INSERT INTO audit_events (id, occurred_at, type, outcome, user_id, "
    "registration_id, passkey_id, client_address, user_agent, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "GET /v1/session/events: a page": "SELECT * FROM audit_events WHERE user_id = ? AND (occurred_at < ? OR "
    "(occurred_at = ? AND id < ?)) ORDER BY occurred_at DESC, id DESC LIMIT ?",
    "admin API: key by hash": "SELECT * FROM admin_keys WHERE key_hash = ? AND revoked_at IS NULL",
}


def main():
    db = sqlite3.connect(sys.argv[1])
    counts = {table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
              for table in ["users", "registrations", "sessions", "challenges", "passkeys"]}
    print("rows: " + ", ".join(f"{table} {count:,}" for table, count in counts.items()) + "\n")
    scans = 0
    for name, sql in STATEMENTS.items():
        print(f"-- {name}")
        for row in db.execute("EXPLAIN QUERY PLAN " + sql, [None] * sql.count("?")):
            detail = row[3]
            scans += detail.startswith("SCAN")
            print(f"   {detail}")
    print(f"\n{scans} table scan(s)")
    sys.exit(1 if scans else 0)


if __name__ == "__main__":
    main()
