#!/usr/bin/env python3
"""DPoP (RFC 9449) end to end, with clients written by others: two instances of the real binary on one PostgreSQL
cluster, a public client that is Authlib's OAuth2Session with DPoP proofs made by PyJWT and `cryptography` (nothing of
this repository's code), and a resource server of this script that verifies Touchstone's tokens and their proofs
with PyJWT alone.

Checked: discovery lists the proof algorithms; the code flow with `dpop_jkt` gives a DPoP-bound token (`token_type`
DPoP, `cnf.jkt` the key's RFC 7638 thumbprint); UserInfo answers with a proof and refuses the token as Bearer; the
refresh works with the key and is refused without it (a public client's refresh token is bound); the Python resource
server accepts the token with a proof and refuses it as Bearer or with another key's proof; a proof used at one
instance is refused at the other (the jti is kept on the shared database), at UserInfo and at `/v1/session/token`.

Usage: scripts/dpop_e2e.py [path/to/touchstone]
"""
import base64
import hashlib
import http.server as httpserver
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

import jwt
import requests
from authlib.integrations.requests_client import OAuth2Session
from cryptography.hazmat.primitives.asymmetric import ec

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
from browser_test import free_port, wait_for  # noqa: E402

PASSWORD = "correct horse battery"
KEK = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="


def fail(message):
    print(f"dpop e2e: FAILED: {message}", flush=True)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class ProofKey:
    """A client's DPoP key (P-256, `cryptography`) and the proofs it signs (PyJWT)."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        numbers = self.key.public_key().public_numbers()
        self.jwk = {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}
        # RFC 7638: the required members, lexicographic order, no white space.
        canonical = json.dumps({k: self.jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
        self.thumbprint = b64url(hashlib.sha256(canonical.encode()).digest())

    def proof(self, method, url, access_token=None, nonce=None, jti=None):
        claims = {"jti": jti or str(uuid.uuid4()), "htm": method, "htu": url, "iat": int(time.time())}
        if access_token:
            claims["ath"] = b64url(hashlib.sha256(access_token.encode()).digest())
        if nonce:
            claims["nonce"] = nonce
        return jwt.encode(claims, self.key, algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": self.jwk})


class ResourceServer(httpserver.BaseHTTPRequestHandler):
    """An API that takes Touchstone's DPoP-bound tokens, verified with PyJWT: the token against the issuer's JWKS, the
    proof (RFC 9449 §4.3) against this request and the token's `cnf.jkt`."""
    issuer = None
    origin = None
    jwks = None
    seen = set()

    def do_GET(self):
        try:
            self.answer(200, {"sub": self.verify()})
        except PermissionError as error:
            self.answer(401, {"error": str(error)}, {"WWW-Authenticate": f'DPoP algs="ES256", error="{error}"'})

    def verify(self):
        scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
        key = ResourceServer.jwks.get_signing_key_from_jwt(token).key
        claims = jwt.decode(token, key, algorithms=["ES256", "EdDSA"], audience=ResourceServer.issuer, issuer=ResourceServer.issuer)
        jkt = (claims.get("cnf") or {}).get("jkt")
        if scheme.lower() != "dpop" or not jkt:
            raise PermissionError("invalid_token")
        proofs = self.headers.get_all("DPoP") or []
        if len(proofs) != 1:
            raise PermissionError("invalid_dpop_proof")
        header = jwt.get_unverified_header(proofs[0])
        if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256" or "d" in header.get("jwk", {}):
            raise PermissionError("invalid_dpop_proof")
        public = jwt.PyJWK(header["jwk"], algorithm="ES256").key
        proof = jwt.decode(proofs[0], public, algorithms=["ES256"], options={"verify_aud": False})
        canonical = json.dumps({k: header["jwk"][k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
        if b64url(hashlib.sha256(canonical.encode()).digest()) != jkt:
            raise PermissionError("invalid_dpop_proof")  # another key than the token's
        if proof.get("htm") != "GET" or proof.get("htu") != ResourceServer.origin + self.path.split("?")[0]:
            raise PermissionError("invalid_dpop_proof")
        if abs(time.time() - proof.get("iat", 0)) > 60 or proof.get("jti") in ResourceServer.seen:
            raise PermissionError("invalid_dpop_proof")
        if proof.get("ath") != b64url(hashlib.sha256(token.encode()).digest()):
            raise PermissionError("invalid_dpop_proof")
        ResourceServer.seen.add(proof["jti"])
        return claims["sub"]

    def answer(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def code_from_page(issuer, url, email):
    """The provider's sign-in page as a form a script fills in (a first-party client: no consent page)."""
    browser = requests.Session()
    page = browser.get(url, allow_redirects=False)
    expect(page.status_code == 200, f"sign-in page: {page.status_code}")
    marker = page.text.index('name="action" value="sign_in"')
    start = page.text.rindex("<form", 0, marker)
    form = page.text[start:page.text.index("</form>", marker)]
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form))
    fields = {k: v.replace("&amp;", "&").replace("&quot;", '"').replace("&#39;", "'") for k, v in fields.items()}
    fields.update({"email": email, "password": PASSWORD})
    done = browser.post(f"{issuer}/oauth2/authorize", data=fields, allow_redirects=False)
    expect(done.status_code in (302, 303), f"sign-in: {done.status_code} {re.findall(r'role=.alert.>([^<]*)', done.text)}")
    return done.headers["Location"]


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/debug/touchstone")
    work = tempfile.mkdtemp(prefix="touchstone-dpop-")
    pg_dir = tempfile.mkdtemp(prefix="touchstone-dpop-pg-")
    started = subprocess.run([os.path.join(SCRIPTS, "postgres.sh"), "start", pg_dir, str(free_port())], capture_output=True, text=True)
    expect(started.returncode == 0, f"PostgreSQL did not start: {started.stderr}")
    database = started.stdout.strip()
    ports = [free_port(), free_port()]
    issuer = f"http://localhost:{ports[0]}"  # one public origin, as behind a load balancer
    env = {**os.environ, "TOUCHSTONE_BCRYPT_COST": "4", "TOUCHSTONE_KEY_ENCRYPTION_KEY": KEK, "TOUCHSTONE_RATE_LIMITS": "off",
           "TOUCHSTONE_ISSUER": issuer, "TOUCHSTONE_MAIL_DIR": os.path.join(work, "mail")}
    servers = []
    api = None
    try:
        subprocess.run([binary, "migrate", "--database", database], check=True, capture_output=True, env=env)
        created = subprocess.run([binary, "clients", "create", "--database", database, "--name", "DPoP app", "--public", "--first-party",
                                  "--redirect-uri", "http://127.0.0.1:9/cb"], capture_output=True, text=True, check=True, env=env)
        client_id = json.loads(created.stdout)["clientId"]
        for index, port in enumerate(ports):
            log = open(os.path.join(work, f"server-{index}.log"), "w")
            servers.append(subprocess.Popen([binary, "serve", "--port", str(port), "--database", database], stdout=log,
                                            stderr=subprocess.STDOUT, env=env))
        instances = [f"http://127.0.0.1:{port}" for port in ports]
        for instance in instances:
            wait_for("the server", lambda: requests.get(f"{instance}/health", timeout=5).json().get("status") == "ok", timeout=60)
        metadata = requests.get(f"{issuer}/.well-known/openid-configuration").json()
        expect(metadata.get("dpop_signing_alg_values_supported") == ["ES256", "EdDSA", "PS256", "RS256"], f"discovery: {metadata}")
        email = "dpop@example.com"
        signed_up = requests.post(f"{issuer}/v1/users", json={"email": email, "password": PASSWORD}).json()

        # The code flow: Authlib, with the code bound to the key (dpop_jkt) and a proof at the token endpoint.
        key, thief = ProofKey(), ProofKey()
        token_url, userinfo_url = metadata["token_endpoint"], metadata["userinfo_endpoint"]
        client = OAuth2Session(client_id, scope="openid email offline_access", redirect_uri="http://127.0.0.1:9/cb",
                               code_challenge_method="S256", token_endpoint_auth_method="none")
        verifier = os.urandom(32).hex()
        url, _ = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, dpop_jkt=key.thumbprint)
        location = code_from_page(issuer, url, email)
        token = client.fetch_token(token_url, authorization_response=location, code_verifier=verifier,
                                   headers={"DPoP": key.proof("POST", token_url)})
        expect(token["token_type"] == "DPoP", f"token_type: {token}")
        access = token["access_token"]
        claims = jwt.decode(access, options={"verify_signature": False})
        expect(claims.get("cnf", {}).get("jkt") == key.thumbprint, f"cnf: {claims.get('cnf')} vs {key.thumbprint}")

        info = requests.get(userinfo_url, headers={"Authorization": f"DPoP {access}", "DPoP": key.proof("GET", userinfo_url, access)})
        expect(info.status_code == 200 and info.json()["sub"] == signed_up["user"]["id"], f"userinfo: {info.status_code} {info.text}")
        bearer = requests.get(userinfo_url, headers={"Authorization": f"Bearer {access}"})
        expect(bearer.status_code == 401 and bearer.headers.get("WWW-Authenticate", "").startswith("DPoP"), f"as Bearer: {bearer.status_code}")

        # Refresh as a public client: the refresh token is bound to the key.
        bare = requests.post(token_url, data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"], "client_id": client_id})
        expect(bare.status_code == 400 and bare.json()["error"] == "invalid_grant", f"refresh without the key: {bare.text}")
        stolen = requests.post(token_url, data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"], "client_id": client_id},
                               headers={"DPoP": thief.proof("POST", token_url)})
        expect(stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant", f"refresh with another key: {stolen.text}")
        refreshed = client.refresh_token(token_url, refresh_token=token["refresh_token"], headers={"DPoP": key.proof("POST", token_url)})
        expect(refreshed["token_type"] == "DPoP" and refreshed["access_token"] != access, f"refresh: {refreshed}")
        access = refreshed["access_token"]

        # A resource server of this script's, PyJWT only.
        api_port = free_port()
        ResourceServer.issuer, ResourceServer.origin = issuer, f"http://127.0.0.1:{api_port}"
        ResourceServer.jwks = jwt.PyJWKClient(metadata["jwks_uri"])
        api = httpserver.ThreadingHTTPServer(("127.0.0.1", api_port), ResourceServer)
        threading.Thread(target=api.serve_forever, daemon=True).start()
        me = f"http://127.0.0.1:{api_port}/me"
        ok = requests.get(me, headers={"Authorization": f"DPoP {access}", "DPoP": key.proof("GET", me, access)})
        expect(ok.status_code == 200, f"resource server: {ok.status_code} {ok.text}")
        expect(requests.get(me, headers={"Authorization": f"Bearer {access}"}).status_code == 401, "resource server took it as Bearer")
        other = requests.get(me, headers={"Authorization": f"DPoP {access}", "DPoP": thief.proof("GET", me, access)})
        expect(other.status_code == 401, "resource server took another key's proof")

        # One proof, two instances: the second refuses the jti the first accepted (the shared database).
        proof = key.proof("GET", userinfo_url, access)
        first = requests.get(f"{instances[0]}/oauth2/userinfo", headers={"Authorization": f"DPoP {access}", "DPoP": proof})
        again = requests.get(f"{instances[1]}/oauth2/userinfo", headers={"Authorization": f"DPoP {access}", "DPoP": proof})
        expect(first.status_code == 200, f"userinfo at the first instance: {first.status_code} {first.text}")
        expect(again.status_code == 401 and again.json()["error"] == "invalid_dpop_proof", f"replay at the other instance: {again.text}")
        session = signed_up["session"]["token"]
        token_proof = key.proof("POST", f"{issuer}/v1/session/token")
        issued = requests.post(f"{instances[1]}/v1/session/token", headers={"Authorization": f"Bearer {session}", "DPoP": token_proof})
        replayed = requests.post(f"{instances[0]}/v1/session/token", headers={"Authorization": f"Bearer {session}", "DPoP": token_proof})
        expect(issued.status_code == 200 and issued.json()["tokenType"] == "DPoP", f"/v1/session/token: {issued.text}")
        expect(replayed.status_code == 400 and replayed.json()["error"]["code"] == "invalid_dpop_proof", f"replayed: {replayed.text}")
        # A jti PostgreSQL's text cannot hold (a NUL) is a malformed proof at both instances, not a 500.
        for instance in instances:
            nul_proof = key.proof("POST", f"{issuer}/v1/session/token", jti="a\u0000b")
            nul = requests.post(f"{instance}/v1/session/token", headers={"Authorization": f"Bearer {session}", "DPoP": nul_proof})
            expect(nul.status_code == 400 and nul.json()["error"]["code"] == "invalid_dpop_proof", f"a NUL in jti: {nul.status_code} {nul.text}")
        # Oversized: over the proof's 8 KiB, the route's invalid_dpop_proof; over the HTTP parser's 80 KiB, its bare 400.
        for size, shaped in ((9_000, True), (100_000, False)):
            big = requests.post(f"{instances[0]}/v1/session/token", headers={"Authorization": f"Bearer {session}", "DPoP": "a" * size})
            expect(big.status_code == 400 and (big.json()["error"]["code"] == "invalid_dpop_proof" if shaped else not big.content),
                   f"a {size}-byte DPoP header: {big.status_code} {big.text[:200]}")
        sqlite_restart(binary, work, {k: v for k, v in env.items() if k != "TOUCHSTONE_ISSUER"})
        print("dpop e2e: Authlib + PyJWT client got DPoP-bound tokens (code with dpop_jkt, UserInfo, bound refresh), "
              "a PyJWT resource server verified cnf.jkt against proofs, two PostgreSQL instances refused a replayed jti, "
              "and an SQLite server killed and restarted refused a proof accepted before", flush=True)
    finally:
        if api:
            api.shutdown()
        for server in servers:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        subprocess.run([os.path.join(SCRIPTS, "postgres.sh"), "stop", pg_dir], capture_output=True)
        shutil.rmtree(pg_dir, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def sqlite_restart(binary, work, env):
    """One server on an SQLite file keeps the jti of /v1 proofs in memory: a second server on the file does not start,
    and after a crash (SIGKILL) the new process refuses a proof the old one accepted until it carries its new nonce."""
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    database = f"sqlite:{work}/restart.sqlite"
    log = open(os.path.join(work, "restart.log"), "w")

    def serve():
        server = subprocess.Popen([binary, "serve", "--port", str(port), "--database", database], stdout=log, stderr=subprocess.STDOUT,
                                  env=env)
        wait_for("the SQLite server", lambda: requests.get(f"{origin}/health", timeout=5).json().get("status") == "ok", timeout=60)
        return server

    server = serve()
    try:
        second = subprocess.run([binary, "serve", "--port", str(free_port()), "--database", database], capture_output=True, text=True,
                                env=env, timeout=60)
        expect(second.returncode != 0 and "another Touchstone server uses this database" in second.stdout + second.stderr,
               f"a second server on one SQLite file: {second.returncode} {second.stderr[-300:]}")
        created = requests.post(f"{origin}/v1/users", json={"email": "restart@example.com", "password": PASSWORD})
        expect(created.status_code == 201, f"sign-up: {created.status_code} {created.text}")
        bearer = {"Authorization": f"Bearer {created.json()['session']['token']}"}
        key = ProofKey()
        url = f"{origin}/v1/session/token"
        proof = key.proof("POST", url)
        expect(requests.post(url, headers={**bearer, "DPoP": proof}).status_code == 200, "a first proof was refused")
        again = requests.post(url, headers={**bearer, "DPoP": proof})
        expect(again.status_code == 400 and again.json()["error"]["code"] == "invalid_dpop_proof", f"a replay: {again.text}")
        server.kill()
        server.wait()
        server = serve()
        replayed = requests.post(url, headers={**bearer, "DPoP": proof})
        nonce = replayed.headers.get("DPoP-Nonce")
        expect(replayed.status_code == 400 and replayed.json()["error"]["code"] == "use_dpop_nonce" and nonce,
               f"a proof accepted before the crash, after it: {replayed.status_code} {replayed.text}")
        fresh = key.proof("POST", url, nonce=nonce)
        expect(requests.post(url, headers={**bearer, "DPoP": fresh}).status_code == 200, "a proof with the new nonce was refused")
        twice = requests.post(url, headers={**bearer, "DPoP": fresh})
        expect(twice.status_code == 400 and twice.json()["error"]["code"] == "invalid_dpop_proof", f"a replay after the restart: {twice.text}")
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
