#!/usr/bin/env python3
"""Sign-in approved on the phone end to end (issue #34): the real binary on loopback; phones that are the CLI's simulated
device (the Swift SDK) and a phone written in Python (scripts/phone.py: its own RFC 8785 and ECDSA); Apple push to a
local HTTP/2 stand-in (Hypercorn over TLS with ALPN h2; the provider token checked with PyJWT); the webhook
`sign_in_request.created` verified with the Standard Webhooks library; OpenID CIBA driven through Authlib.

Checked: approve (the first of two concurrent polls gets the one session), a wrong number, "not me" and cancel,
expiry, the replay of an approval, a signature of another request, the push's protocol, headers, token and payload, a
token Apple calls unregistered forgotten, the CIBA poll flow to an ID token with amr hwk user (verified against the
JWKS), access_denied after a decline and expired_token after expiry; no poll token, QR secret, device credential,
push token or auth_req_id in the server's log.

Usage: scripts/phone_approval_e2e.py [path/to/touchstone]
"""
import asyncio
import base64
import datetime
import http.server as httpserver
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import jwt as pyjwt
import requests
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypercorn.asyncio import serve
from hypercorn.config import Config
from standardwebhooks.webhooks import Webhook

warnings.simplefilter("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import free_port, wait_for  # noqa: E402
from phone import Phone, call  # noqa: E402

PASSWORD = "correct horse battery"
CIBA = "urn:openid:params:grant-type:ciba"


def fail(message):
    print(f"phone approval e2e: FAILED: {message}", flush=True)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


# MARK: Apple's push service, stood in for on loopback (HTTP/2 over TLS)

class Apple:
    received = []
    answers = []

    @staticmethod
    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        Apple.received.append({"version": scope["http_version"], "path": scope["path"], "headers": headers, "body": body})
        status, reason = Apple.answers.pop(0) if Apple.answers else (200, None)
        await send({"type": "http.response.start", "status": status, "headers": [(b"apns-id", b"0a0b0c0d-0000-0000-0000-000000000000")]})
        await send({"type": "http.response.body", "body": json.dumps({"reason": reason}).encode() if reason else b""})


def certificate(work):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .sign(key, hashes.SHA256()))
    paths = (os.path.join(work, "apple.pem"), os.path.join(work, "apple.key"))
    with open(paths[0], "wb") as file:
        file.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(paths[1], "wb") as file:
        file.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return paths


def start_apple(work, port):
    cert, key = certificate(work)
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.certfile, config.keyfile = cert, key
    config.alpn_protocols = ["h2"]
    config.loglevel = "ERROR"
    # A shutdown trigger of its own: Hypercorn installs no signal handlers (it runs on a thread of its own).
    never = lambda: asyncio.Event().wait()  # noqa: E731
    threading.Thread(target=lambda: asyncio.run(serve(Apple.app, config, shutdown_trigger=never)), daemon=True).start()
    return cert


# MARK: The app's backend, hearing of requests by webhook

class Hooks(httpserver.BaseHTTPRequestHandler):
    secret = None
    events = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        event = Webhook(Hooks.secret).verify(body, {k.lower(): v for k, v in self.headers.items()})
        Hooks.events.append(event)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def cli(binary, env, *args, check=True):
    result = subprocess.run([binary, *args], capture_output=True, text=True, env=env)
    if check and result.returncode != 0:
        fail(f"touchstone {' '.join(args)}: {result.stdout} {result.stderr}")
    return result


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/touchstone"
    work = tempfile.mkdtemp(prefix="touchstone-phone-")
    port, apple_port, hook_port = free_port(), free_port(), free_port()
    origin = f"http://127.0.0.1:{port}"
    database = f"sqlite:{work}/touchstone.sqlite"
    provider_key = ec.generate_private_key(ec.SECP256R1())
    with open(os.path.join(work, "apns.p8"), "wb") as file:
        file.write(provider_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    apple_cert = start_apple(work, apple_port)
    env = {**os.environ, "TOUCHSTONE_BCRYPT_COST": "4", "TOUCHSTONE_RATE_LIMITS": "off", "TOUCHSTONE_PASSWORD": PASSWORD,
           "TOUCHSTONE_SIGN_IN_REQUEST_TTL_SECONDS": "10", "TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE": "loopback",
           "TOUCHSTONE_APNS_KEY_FILE": os.path.join(work, "apns.p8"), "TOUCHSTONE_APNS_KEY_ID": "ABC123DEFG",
           "TOUCHSTONE_APNS_TEAM_ID": "TEAM123456", "TOUCHSTONE_APNS_TOPIC": "com.example.touchstone",
           "TOUCHSTONE_APNS_ENVIRONMENT": "development", "TOUCHSTONE_APNS_URL": f"https://localhost:{apple_port}",
           "TOUCHSTONE_APNS_CA_FILE": apple_cert}
    cli(binary, env, "migrate", "--database", database)
    endpoint = json.loads(cli(binary, env, "webhooks", "create", "--url", f"http://127.0.0.1:{hook_port}/hook", "--event",
                              "sign_in_request.created", "--database", database).stdout)
    Hooks.secret = endpoint["secret"]
    hooks = httpserver.ThreadingHTTPServer(("127.0.0.1", hook_port), Hooks)
    threading.Thread(target=hooks.serve_forever, daemon=True).start()
    ciba_client = json.loads(cli(binary, env, "clients", "create", "--name", "Call centre", "--ciba", "--database", database).stdout)
    log_path = os.path.join(work, "server.log")
    server = subprocess.Popen([binary, "serve", "--port", str(port), "--database", database],
                              stdout=open(log_path, "w"), stderr=subprocess.STDOUT, env=env)
    secrets = []
    try:
        wait_for("the server", lambda: call("GET", f"{origin}/health")[1].get("status") == "ok")
        state = os.path.join(work, "cli-phone")
        device = ["--server", origin, "--state", state]
        email = "phone-e2e@example.com"
        cli(binary, env, "device", "enable", "--email", email, "--sign-up", *device)
        python_phone = Phone(origin, email, PASSWORD, "python-phone")
        push_token = "a1" * 32
        secrets += [python_phone.credential, push_token, json.load(open(os.path.join(state, "device-credential.json")))["credential"]]
        expect(python_phone.register_push_token(push_token)[0] == 204, "push token refused")

        def start(body):
            status, started = call("POST", f"{origin}/v1/sign-in-requests", body, {"User-Agent": "e2e browser"})
            expect(status == 201, f"create: {status} {started}")
            secrets.extend([started["pollToken"], started["qr"].split("secret=")[1].split("&")[0]])
            return started

        def poll(started, wait=0):
            return call("GET", f"{origin}/v1/sign-in-requests/{started['requestId']}?wait={wait}",
                        headers={"Authorization": f"Bearer {started['pollToken']}"})[1]

        # A request that will expire (TTL 10 s), made first and checked last.
        expiring = start({"email": email})

        # 1. Approve with the CLI's phone; two browsers poll at once; exactly one session.
        started = start({"email": email})
        answers = []
        threads = [threading.Thread(target=lambda: answers.append(poll(started, wait=20))) for _ in range(2)]
        for thread in threads:
            thread.start()
        listed = json.loads(cli(binary, env, "device", "sign-in-requests", *device).stdout)["requests"]
        request = next(r for r in listed if r["requestId"] == started["requestId"])
        expect(started["number"] in request["numbers"] and len(set(request["numbers"])) == 3, f"numbers: {request}")
        expect(request["payload"]["browser"]["userAgent"] == "e2e browser", f"payload: {request['payload']}")
        cli(binary, env, "device", "approve-sign-in", started["requestId"], "--number", str(started["number"]), *device)
        for thread in threads:
            thread.join(30)
        expect(len(answers) == 2 and all(a["status"] == "approved" for a in answers), f"polls: {answers}")
        sessions = [a["session"] for a in answers if "session" in a]
        expect(len(sessions) == 1 and sessions[0]["methods"] == ["phone_approval"], f"sessions: {sessions}")
        expect(call("GET", f"{origin}/v1/session", headers={"Authorization": f"Bearer {sessions[0]['token']}"})[0] == 200, "session")
        print("phone approval e2e: approved on the CLI's phone; of two concurrent polls one got the session", flush=True)

        # 2. The push of that request, and the webhook.
        wait_for("the push", lambda: len(Apple.received) >= 2)
        push = Apple.received[1]
        expect(push["version"] == "2", f"the push came over HTTP/{push['version']}")
        expect(push["path"] == f"/3/device/{push_token}", f"path {push['path']}")
        expect(push["headers"]["apns-topic"] == "com.example.touchstone" and push["headers"]["apns-push-type"] == "alert", push["headers"])
        claims = pyjwt.decode(push["headers"]["authorization"].split(" ", 1)[1], provider_key.public_key(), algorithms=["ES256"],
                              options={"verify_aud": False})
        header = pyjwt.get_unverified_header(push["headers"]["authorization"].split(" ", 1)[1])
        expect(claims["iss"] == "TEAM123456" and header["kid"] == "ABC123DEFG", f"provider token {header} {claims}")
        payload = json.loads(push["body"])
        expect(payload["requestId"] == started["requestId"] and "aps" in payload, f"push payload {payload}")
        wait_for("the webhook", lambda: any(e["data"]["requestId"] == started["requestId"] for e in Hooks.events))
        event = next(e for e in Hooks.events if e["data"]["requestId"] == started["requestId"])
        cli_registration = json.load(open(os.path.join(state, "device-credential.json")))["registrationId"]
        expect(set(event["data"]["registrationIds"]) == {python_phone.registration_id, cli_registration}, f"webhook {event}")
        print("phone approval e2e: pushed over HTTP/2 with a valid provider token; announced by a verified webhook", flush=True)

        # 3. The Python phone: a wrong number declines; a right one approves once; a replay and a crossed signature fail.
        wrong = start({"email": email})
        item = python_phone.request(wrong["requestId"])
        status, body = python_phone.approve(wrong["requestId"], item["payload"], next(n for n in item["numbers"] if n != wrong["number"]))
        expect(status == 409 and body["error"]["code"] == "wrong_number", f"wrong number: {status} {body}")
        expect(poll(wrong)["status"] == "declined", "a wrong number must decline")
        first, second = start({"email": email}), start({"email": email})
        a, b = python_phone.request(first["requestId"]), python_phone.request(second["requestId"])
        crossed = python_phone.approve_body(a["payload"], second["number"])
        status, body = python_phone.approve(second["requestId"], None, None, body=crossed)
        expect(status == 400 and body["error"]["code"] == "invalid_signature", f"crossed: {status} {body}")
        approval = python_phone.approve_body(a["payload"], first["number"])
        expect(python_phone.approve(first["requestId"], None, None, body=approval)[0] == 200, "the Python phone's approval")
        status, body = python_phone.approve(first["requestId"], None, None, body=approval)
        expect(status == 409 and body["error"]["code"] == "sign_in_request_not_pending", f"replay: {status} {body}")
        expect(poll(first)["session"]["methods"] == ["phone_approval"], "the Python phone's approval signs in")
        status, _ = python_phone.decline(second["requestId"], b["payload"], "cancel")
        expect(status == 200 and poll(second)["status"] == "declined", "cancel")
        print("phone approval e2e: wrong number, approval by an independent signer, replay, crossed signature, cancel", flush=True)

        # 4. "Not me" with the CLI.
        not_me = start({"email": email})
        out = json.loads(cli(binary, env, "device", "decline-sign-in", not_me["requestId"], "--not-me", *device).stdout)
        expect(out["signInRequest"]["reason"] == "not_me" and poll(not_me)["status"] == "declined", f"not me: {out}")

        # 4b. Apple unavailable, then back: the push is recorded with the request and sent again from the record
        # (issue #44 item 1), a couple of seconds later.
        Apple.answers.append((503, "ServiceUnavailable"))
        before = len(Apple.received)
        retried = start({"email": email})
        pushed = lambda: [r for r in Apple.received[before:] if retried["requestId"].encode() in r["body"]]  # noqa: E731
        wait_for("the push sent again after Apple's 503", lambda: len(pushed()) >= 2, timeout=60)
        item = python_phone.request(retried["requestId"])
        expect(python_phone.decline(retried["requestId"], item["payload"], "cancel")[0] == 200, "decline the retried request")
        print(f"phone approval e2e: Apple down then back: the push went again from its record ({len(pushed())} sends)", flush=True)

        # 5. Apple says the token is gone: it is forgotten.
        Apple.answers.append((410, "Unregistered"))
        before = len(Apple.received)
        start({"email": email})
        wait_for("the refused push", lambda: len(Apple.received) > before)
        wait_for("the token forgotten", lambda: 'touchstone_push_notifications_total{outcome="token_invalid"} 1'
                 in requests.get(f"{origin}/metrics", timeout=10).text)
        print("phone approval e2e: not me; an unregistered push token forgotten", flush=True)

        # 6. CIBA through Authlib: pending, then tokens; a decline is access_denied.
        client_id, client_secret = ciba_client["clientId"], ciba_client["clientSecret"]
        metadata = requests.get(f"{origin}/.well-known/openid-configuration", timeout=10).json()
        expect(metadata["backchannel_token_delivery_modes_supported"] == ["poll"], "discovery")
        oauth = OAuth2Session(client_id, client_secret, token_endpoint_auth_method="client_secret_basic")

        def bc_authorize(**form):
            answer = requests.post(metadata["backchannel_authentication_endpoint"], data=form, auth=(client_id, client_secret), timeout=10)
            expect(answer.status_code == 200, f"bc-authorize: {answer.status_code} {answer.text}")
            secrets.append(answer.json()["auth_req_id"])
            return answer.json()

        def ciba_poll(auth_req_id):
            try:
                return oauth.fetch_token(metadata["token_endpoint"], grant_type=CIBA, auth_req_id=auth_req_id)
            except OAuthError as error:
                return error.error

        ciba_expiring = bc_authorize(scope="openid", login_hint=email, requested_expiry="10")
        ciba = bc_authorize(scope="openid email", login_hint=email, binding_message="Call 4711")
        expect(ciba["interval"] == 5, f"interval {ciba}")
        expect(ciba_poll(ciba["auth_req_id"]) == "authorization_pending", "authorization_pending")
        expect(ciba_poll(ciba["auth_req_id"]) == "slow_down", "slow_down")
        item = next(r for r in python_phone.pending() if r["payload"].get("bindingMessage") == "Call 4711")
        expect(item["numbers"] == [] and item["client"] == "Call centre" and item["payload"]["kind"] == "backchannel", f"{item}")
        expect(python_phone.approve(item["requestId"], item["payload"], None)[0] == 200, "CIBA approval")
        time.sleep(5)
        tokens = ciba_poll(ciba["auth_req_id"])
        expect(isinstance(tokens, dict) and "id_token" in tokens, f"CIBA tokens: {tokens}")
        jwks = pyjwt.PyJWKClient(metadata["jwks_uri"])
        id_token = pyjwt.decode(tokens["id_token"], jwks.get_signing_key_from_jwt(tokens["id_token"]).key,
                                algorithms=["ES256", "EdDSA"], audience=client_id, issuer=metadata["issuer"])
        expect(id_token["amr"] == ["hwk", "user"] and id_token["sub"] == python_phone.user_id, f"ID token {id_token}")
        time.sleep(5)
        expect(ciba_poll(ciba["auth_req_id"]) == "invalid_grant", "a second exchange")
        denied = bc_authorize(scope="openid", login_hint=python_phone.user_id)
        # Pending oldest first: the newest backchannel request is the one just made (not the one left to expire).
        item = [r for r in python_phone.pending() if r["payload"]["kind"] == "backchannel"][-1]
        expect(python_phone.decline(item["requestId"], item["payload"], "cancel")[0] == 200, "CIBA decline")
        expect(ciba_poll(denied["auth_req_id"]) == "access_denied", "access_denied")
        print("phone approval e2e: CIBA through Authlib: pending, slow_down, tokens with amr hwk user (JWKS), once; access_denied", flush=True)

        # 7. Expiry, last: the browser's request and the backchannel one made first.
        wait_for("the expiry", lambda: poll(expiring)["status"] == "expired", timeout=15)
        wait_for("the CIBA expiry", lambda: ciba_poll(ciba_expiring["auth_req_id"]) == "expired_token", timeout=15)
        print("phone approval e2e: expired requests answer expired and expired_token", flush=True)

        log = open(log_path).read()
        for secret in secrets:
            expect(secret not in log, "a poll token, QR secret, device credential, push token or auth_req_id is in the log")
        print("phone approval e2e: ok", flush=True)
    finally:
        server.terminate()
        server.wait(15)
        hooks.shutdown()


if __name__ == "__main__":
    main()
