#!/usr/bin/env python3
"""Verifies a Touchstone access token with PyJWT and nothing but the issuer's JWKS: the interoperability check that
an app's API in another language can do (scripts/smoke.sh runs it against the real server).

Usage: jwt_interop.py JWKS_URL ISSUER AUDIENCE TOKEN [REVOKED_TOKEN]
Exits 0 when TOKEN verifies (signature, typ at+jwt, iss, aud, exp) and a tampered copy of it does not.
"""
import sys

import jwt  # PyJWT (pip install pyjwt cryptography)


def verify(client: jwt.PyJWKClient, token: str, issuer: str, audience: str) -> dict:
    header = jwt.get_unverified_header(token)
    if header.get("typ", "").lower() not in ("at+jwt", "application/at+jwt"):
        raise jwt.InvalidTokenError(f"typ {header.get('typ')!r} is not at+jwt")
    key = client.get_signing_key_from_jwt(token)
    return jwt.decode(
        token,
        key.key,
        algorithms=["ES256", "EdDSA"],
        audience=audience,
        issuer=issuer,
        options={"require": ["exp", "iat", "iss", "aud", "sub", "jti", "client_id"]},
    )


def main() -> int:
    jwks_url, issuer, audience, token = sys.argv[1:5]
    client = jwt.PyJWKClient(jwks_url)
    claims = verify(client, token, issuer, audience)
    for claim in ("sid", "auth_time", "amr"):
        if claim not in claims:
            print(f"jwt_interop: claim {claim} missing", file=sys.stderr)
            return 1
    header, payload, signature = token.split(".")
    tampered = header + "." + payload + "." + signature[::-1]
    try:
        verify(client, tampered, issuer, audience)
    except jwt.InvalidTokenError:
        pass
    else:
        print("jwt_interop: a tampered token verified", file=sys.stderr)
        return 1
    try:
        verify(client, token, issuer, "https://somebody-else.example")
    except jwt.InvalidAudienceError:
        pass
    else:
        print("jwt_interop: a token verified for another audience", file=sys.stderr)
        return 1
    print(f"jwt_interop: PyJWT {jwt.__version__} verified sub={claims['sub']} amr={claims['amr']} with the JWKS alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
