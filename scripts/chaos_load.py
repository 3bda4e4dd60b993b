"""The chaos test's load (scripts/chaos.py): the round-robin client over the instances that are up, the accounts that
act (a device key, a passkey of this script's own none-attestation authenticator, a phone that approves sign-in
requests), and what the servers acknowledged."""
import base64
import hashlib
import json
import os
import random
import struct
import threading
import time
import urllib.error
import urllib.request

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from phone import canonical

PASSWORD = "correct horse battery"


def fail(message):
    print(f"chaos: FAILED: {message}", flush=True)
    raise SystemExit(1)


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


class Client:
    """Round robin over the instances that are up; records every answer (time, status, code) for the checks."""

    def __init__(self, instances):
        self.instances = instances
        self.lock = threading.Lock()
        self.turn = 0
        self.answers = []  # (monotonic time, status, code, what)

    def call(self, method, path, body=None, token=None, headers=None, what="", record=True):
        """(status, json) from one instance, or (None, None) when no answer came (a killed instance): the caller must
        not count it as acknowledged."""
        with self.lock:
            live = [i for i in self.instances if i.up] or self.instances
            instance = live[self.turn % len(live)]
            self.turn += 1
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(instance.origin + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=40) as answer:
                status, raw = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        except (urllib.error.URLError, OSError, ConnectionError):
            return None, None
        try:
            parsed = json.loads(raw) if raw else {}
        except ValueError:
            parsed = {}
        code = parsed.get("error", {}).get("code") if isinstance(parsed.get("error"), dict) else None
        if record:
            with self.lock:
                self.answers.append((time.monotonic(), status, code, f"{method} {path.split('?')[0]} {what}"))
        return status, parsed

    def must(self, method, path, body=None, token=None, headers=None, expect=(200,)):
        """A call retried until an instance answers one of `expect` (for setup and checks)."""
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            status, answer = self.call(method, path, body, token, headers, record=False)
            if status in expect:
                return answer
            time.sleep(0.2)
        fail(f"{method} {path}: no {expect} within 90 s (last {status} {answer})")





def cbor(value):
    """The CBOR a none-attestation registration needs: maps, byte and text strings, small and negative integers."""
    def head(major, length):
        if length < 24:
            return bytes([major << 5 | length])
        if length < 256:
            return bytes([major << 5 | 24, length])
        return bytes([major << 5 | 25]) + struct.pack(">H", length)
    if isinstance(value, bool):
        raise TypeError("no booleans here")
    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, bytes):
        return head(2, len(value)) + value
    if isinstance(value, str):
        return head(3, len(value.encode())) + value.encode()
    if isinstance(value, dict):
        return head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(type(value))


class User:
    """An account with a device key (a phone) and a passkey, signed in with the device key as the load runs."""

    def __init__(self, client, index, origin):
        self.client = client
        self.email = f"chaos-{index}-{random.randrange(1 << 30)}@example.com"
        self.origin = origin
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.passkey = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(16)
        self.counter = 0
        signed_up = client.must("POST", "/v1/users", {"email": self.email, "password": PASSWORD}, expect=(201,))
        token = signed_up["session"]["token"]
        self.user_id = signed_up["user"]["id"]
        spki = self.key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        started = client.must("POST", "/v1/biometrics/registrations/start", {
            "publicKey": base64.b64encode(spki).decode(), "algorithm": "ES256", "deviceId": f"chaos-phone-{index}",
            "deviceName": "Chaos phone"}, token=token)
        finished = client.must("POST", "/v1/biometrics/registrations/finish", {
            "registrationId": started["registrationId"],
            "signature": base64.b64encode(self.sign(started["challenge"].encode())).decode()}, token=token, expect=(201,))
        self.registration_id = finished["registration"]["id"]
        self.device_credential = finished["deviceCredential"]
        self.register_passkey(token)

    def sign(self, data):
        return self.key.sign(data, ec.ECDSA(hashes.SHA256()))

    # Passkeys: a none-attestation authenticator of this script's own.

    def client_data(self, kind, challenge):
        return json.dumps({"type": kind, "challenge": challenge, "origin": self.origin, "crossOrigin": False}).encode()

    def authenticator_data(self, flags, attested=b""):
        self.counter += 1
        return hashlib.sha256(b"localhost").digest() + bytes([flags]) + struct.pack(">I", self.counter) + attested

    def register_passkey(self, token):
        options = self.client.must("POST", "/v1/passkeys/registrations/options", {}, token=token)
        numbers = self.passkey.public_key().public_numbers()
        cose = {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
        attested = bytes(16) + struct.pack(">H", len(self.credential_id)) + self.credential_id + cbor(cose)
        auth_data = self.authenticator_data(0x45, attested)  # UP, UV, AT
        attestation = cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client_data = self.client_data("webauthn.create", options["challenge"])
        self.client.must("POST", "/v1/passkeys/registrations/verify", {
            "id": b64url(self.credential_id), "rawId": b64url(self.credential_id), "type": "public-key",
            "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation),
                         "transports": ["internal"]}}, token=token, expect=(200, 201))

    def passkey_sign_in(self):
        status, options = self.client.call("POST", "/v1/passkeys/authentications/options", {"email": self.email}, what="passkey")
        if status != 200:
            return None
        client_data = self.client_data("webauthn.get", options["challenge"])
        auth_data = self.authenticator_data(0x05)  # UP, UV
        signature = self.passkey.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        status, answer = self.client.call("POST", "/v1/passkeys/authentications/verify", {
            "id": b64url(self.credential_id), "rawId": b64url(self.credential_id), "type": "public-key",
            "response": {"clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                         "signature": b64url(signature), "userHandle": b64url(self.user_id.encode())}}, what="passkey")
        return answer["session"]["token"] if status == 200 else None

    def device_sign_in(self):
        status, started = self.client.call("POST", "/v1/biometrics/authentications/start", {"registrationId": self.registration_id},
                                           what="biometric")
        if status != 200:
            return None
        status, answer = self.client.call("POST", "/v1/biometrics/authentications/finish", {
            "registrationId": self.registration_id, "challenge": started["challenge"],
            "signature": base64.b64encode(self.sign(started["challenge"].encode())).decode()}, what="biometric")
        return answer["session"]["token"] if status == 200 else None

    def confirmation(self, token):
        status, created = self.client.call("POST", "/v1/confirmations", {"summary": f"Pay {random.randrange(1, 999)} EUR"},
                                           token=token, what="confirmation")
        if status != 201:
            return None
        confirmation_id = created["confirmation"]["id"]
        signature = base64.b64encode(self.sign(created["payload"].encode())).decode()
        status, _ = self.client.call("POST", f"/v1/confirmations/{confirmation_id}/approve",
                                     {"registrationId": self.registration_id, "signature": signature}, token=token,
                                     what="confirmation")
        return confirmation_id if status == 200 else None

    def approved_sign_in_request(self):
        """A browser asks, the phone approves, the browser collects: (request id, poll token) once approved."""
        status, started = self.client.call("POST", "/v1/sign-in-requests", {"email": self.email}, what="sign-in request")
        if status != 201:
            return None
        device = {"Authorization": f"Device {self.registration_id}:{self.device_credential}"}
        status, pending = self.client.call("GET", "/v1/sign-in-requests/pending", headers=device, what="sign-in request")
        if status != 200:
            return None
        item = next((r for r in pending["requests"] if r["requestId"] == started["requestId"]), None)
        if item is None:
            return None
        message = dict(item["payload"], decision="approve", choice=started["number"])
        signature = b64url(self.sign(canonical(message)))
        status, _ = self.client.call("POST", f"/v1/sign-in-requests/{started['requestId']}/approve", {
            "registrationId": self.registration_id, "choice": started["number"], "signature": signature}, what="sign-in request")
        return (started["requestId"], started["pollToken"]) if status == 200 else None


# MARK: What was acknowledged, and the workers


class Ledger:
    """What the servers acknowledged."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sessions = []  # session tokens from 2xx sign-ins
        self.confirmations = []  # (token of the owner, confirmation id) approved with 200
        self.resets = {}  # address -> acknowledged (202) reset requests
        self.unanswered_resets = {}  # address -> reset requests that got no answer (may or may not have been recorded)
        self.requests = []  # (request id, poll token) approved with 200
        self.collected = {}  # request id -> sessions handed out to polls
        self.unanswered = set()  # requests one of whose polls got no answer (the instance died): its session may be lost

    def add(self, name, value):
        with self.lock:
            getattr(self, name).append(value)


def worker(client, user, ledger, stop):
    while not stop.is_set():
        action = random.random()
        if action < 0.3:
            token = user.device_sign_in()
            if token:
                ledger.add("sessions", token)
        elif action < 0.45:
            token = user.passkey_sign_in()
            if token:
                ledger.add("sessions", token)
        elif action < 0.65:
            token = user.device_sign_in()
            if token:
                ledger.add("sessions", token)
                confirmation = user.confirmation(token)
                if confirmation:
                    ledger.add("confirmations", (token, confirmation))
        elif action < 0.8:
            status, _ = client.call("POST", "/v1/password-resets", {"email": user.email}, what="password reset")
            with ledger.lock:
                if status == 202:
                    ledger.resets[user.email] = ledger.resets.get(user.email, 0) + 1
                elif status is None:
                    # No answer (the instance died): the request may have been recorded, and then it is mailed.
                    ledger.unanswered_resets[user.email] = ledger.unanswered_resets.get(user.email, 0) + 1
        else:
            approved = user.approved_sign_in_request()
            if approved:
                ledger.add("requests", approved)
                collect(client, ledger, approved)


def collect(client, ledger, approved, attempts=1):
    """The browser's poll: the first answer after the approval carries the session."""
    request_id, poll_token = approved
    for _ in range(attempts):
        status, answer = client.call("GET", f"/v1/sign-in-requests/{request_id}?wait=0", token=poll_token, what="poll")
        if status is None:
            # A poll cut off by a SIGKILL may have redeemed the approval with its answer: the session was handed to a
            # browser that never heard it (at most once, as documented), so this request cannot be checked for one.
            with ledger.lock:
                ledger.unanswered.add(request_id)
        if status == 200 and answer.get("session"):
            with ledger.lock:
                ledger.collected.setdefault(request_id, []).append(answer["session"]["token"])
                ledger.sessions.append(answer["session"]["token"])
