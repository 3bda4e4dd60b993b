#!/usr/bin/env python3
"""Writes the fuzzing seed corpus, Fuzz/corpus/<target>/, from data with a named source.

- The WebAuthn Level 3 specification's test vectors (section 16), as copied into
  Tests/TouchstoneWebAuthnTests/Fixtures/w3c-webauthn-l3-section16.json: attestation objects, authenticator data,
  COSE keys, signatures and clientDataJSON of every registration and authentication vector.
- Apple's published App Attest attestation (Tests/TouchstoneWebAuthnTests/Fixtures/apple-app-attest-guide.json).
- Public keys in every accepted encoding, made here with the openssl command line (public data only).
- A few hand-written edge cases per target.
- Fuzz/corpus/dpop-proof (not written by this script): DPoP proofs made on 2026-11-28 with PyJWT and `cryptography`
  under keys generated for the purpose (ES256, EdDSA, PS256; one with ath and nonce), and edits of them (alg none, a
  private jwk member, two parts).

Run it once; the output is committed. libFuzzer adds what it finds to artifacts/fuzz/, not to the repository;
`scripts/fuzz.sh merge` then adds the found inputs that reach new code to Fuzz/corpus (files named by their SHA-1;
the corpus committed on 2026-11-22 holds the seeds plus what CI's first 60-second runs found).
"""
import base64
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..")
FIXTURES = os.path.join(ROOT, "Tests", "TouchstoneWebAuthnTests", "Fixtures")
OUT = os.path.join(ROOT, "Fuzz", "corpus")


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def write(target, name, data):
    directory = os.path.join(OUT, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as handle:
        handle.write(data)


def openssl(*args, stdin=None):
    return subprocess.run(["openssl", *args], input=stdin, capture_output=True, check=True).stdout


def main():
    vectors = json.load(open(os.path.join(FIXTURES, "w3c-webauthn-l3-section16.json")))
    for vector in vectors["registrations"]:
        name = vector["name"]
        attestation = b64url(vector["attestationObject"])
        write("attestation-object", name, attestation)
        write("cbor", "att-" + name, attestation)
        write("client-data", "reg-" + name, b64url(vector["clientDataJSON"]))
    for vector in vectors["authentications"]:
        name = vector["name"]
        write("authenticator-data", name, b64url(vector["authenticatorData"]))
        write("signature", name, b64url(vector["signature"]))
        write("cose-key", name, b64url(vector["credentialPublicKeyCOSE"]))
        write("cbor", "cose-" + name, b64url(vector["credentialPublicKeyCOSE"]))
        write("client-data", "auth-" + name, b64url(vector["clientDataJSON"]))

    apple = json.load(open(os.path.join(FIXTURES, "apple-app-attest-guide.json")))
    attestation = apple["attestation"]
    data = b64url(attestation) if "-" in attestation or "_" in attestation else base64.b64decode(attestation)
    write("attestation-object", "apple-app-attest", data)
    write("cbor", "apple-app-attest", data)

    # Public keys: SPKI DER and PEM for each algorithm, X9.63 and compressed P-256, raw Ed25519, PKCS#1 RSA.
    p256 = openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256")
    p256_der = openssl("pkey", "-pubout", "-outform", "DER", stdin=p256)
    write("public-key", "p256-spki.der", p256_der)
    write("public-key", "p256-spki.pem", openssl("pkey", "-pubout", stdin=p256))
    write("public-key", "p256-x963", p256_der[-65:])
    point = p256_der[-65:]
    write("public-key", "p256-compressed", bytes([2 + (point[64] & 1)]) + point[1:33])
    ed = openssl("genpkey", "-algorithm", "ED25519")
    ed_der = openssl("pkey", "-pubout", "-outform", "DER", stdin=ed)
    write("public-key", "ed25519-spki.der", ed_der)
    write("public-key", "ed25519-raw", ed_der[-32:])
    rsa = openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048")
    write("public-key", "rsa-spki.der", openssl("pkey", "-pubout", "-outform", "DER", stdin=rsa))
    write("public-key", "rsa-spki.pem", openssl("pkey", "-pubout", stdin=rsa))
    write("public-key", "rsa-pkcs1.der", openssl("rsa", "-RSAPublicKey_out", "-outform", "DER", stdin=rsa))
    write("public-key", "identity", b"\x00")

    # Hand-written edge cases.
    write("cbor", "indefinite-map", bytes([0xBF, 0x61, 0x61, 0x01, 0xFF]))
    write("cbor", "huge-length", bytes([0x5B] + [0xFF] * 8))
    write("cbor", "nested", bytes([0x81] * 20 + [0x00]))
    write("cbor", "duplicate-keys", bytes([0xA2, 0x01, 0x01, 0x01, 0x02]))
    write("cbor", "floats-and-tags", bytes([0x83, 0xF9, 0x3C, 0x00, 0xC1, 0x01, 0xF5]))
    write("authenticator-data", "short", bytes(37))
    write("client-data", "escapes", json.dumps({"type": "webauthn.get", "challenge": "\u00e9\\", "origin": "x"}).encode())
    write("signature", "empty-der", bytes([0x30, 0x00]))
    print("wrote", sum(len(files) for _, _, files in os.walk(OUT)), "seed files under", os.path.relpath(OUT, ROOT))


if __name__ == "__main__":
    sys.exit(main())
