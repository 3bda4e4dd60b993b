"""A phone written in Python for the end-to-end and browser tests of sign-in approval (issue #34): it enrols a P-256
device key with the public API, keeps the device credential enrolment answers, reads pending requests without a
prompt, and signs the RFC 8785 canonical JSON of a request's payload and a decision with the `cryptography` package —
an implementation of the signing side that shares no code with the Swift SDK.
"""
import base64
import json
import urllib.error
import urllib.request

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec


def call(method, url, body=None, headers=None, timeout=40):
    """(status, JSON body) of a request; never raises for an HTTP error status."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read()
            return response.status, (json.loads(text) if text else {})
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, (json.loads(text) if text else {})


def canonical(value):
    """RFC 8785 for what a sign-in payload holds (objects with ASCII keys, strings, integers, null): Python's JSON
    writer with sorted keys and no spaces escapes strings as ECMAScript's JSON.stringify does."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class Phone:
    def __init__(self, origin, email, password, device_id):
        self.origin = origin
        status, signed_in = call("POST", f"{origin}/v1/sessions", {"email": email, "password": password})
        assert status == 200, signed_in
        self.user_id = signed_in["user"]["id"]
        token = signed_in["session"]["token"]
        self.key = ec.generate_private_key(ec.SECP256R1())
        spki = self.key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        status, started = call("POST", f"{origin}/v1/biometrics/registrations/start", {
            "publicKey": base64.b64encode(spki).decode(), "algorithm": "ES256", "deviceId": device_id, "deviceName": "Python phone",
        }, {"Authorization": f"Bearer {token}"})
        assert status == 200, started
        signature = self.key.sign(started["challenge"].encode(), ec.ECDSA(hashes.SHA256()))
        status, finished = call("POST", f"{origin}/v1/biometrics/registrations/finish", {
            "registrationId": started["registrationId"], "signature": base64.b64encode(signature).decode(),
        }, {"Authorization": f"Bearer {token}"})
        assert status == 201, finished
        self.registration_id = finished["registration"]["id"]
        self.credential = finished["deviceCredential"]

    @property
    def authorization(self):
        return {"Authorization": f"Device {self.registration_id}:{self.credential}"}

    def pending(self):
        status, body = call("GET", f"{self.origin}/v1/sign-in-requests/pending", headers=self.authorization)
        assert status == 200, body
        return body["requests"]

    def request(self, request_id):
        return next(r for r in self.pending() if r["requestId"] == request_id)

    def register_push_token(self, token_hex):
        return call("PUT", f"{self.origin}/v1/biometrics/registrations/{self.registration_id}/push-token",
                    {"platform": "apns", "token": token_hex}, self.authorization)

    def sign(self, payload, decision, choice=None, reason=None):
        message = dict(payload, decision=decision, choice=choice)
        if reason is not None:
            message["reason"] = reason
        return base64.urlsafe_b64encode(self.key.sign(canonical(message), ec.ECDSA(hashes.SHA256()))).decode().rstrip("=")

    def approve_body(self, payload, choice):
        return {"registrationId": self.registration_id, "choice": choice, "signature": self.sign(payload, "approve", choice)}

    def approve(self, request_id, payload, choice, body=None):
        return call("POST", f"{self.origin}/v1/sign-in-requests/{request_id}/approve", body or self.approve_body(payload, choice))

    def decline(self, request_id, payload, reason):
        return call("POST", f"{self.origin}/v1/sign-in-requests/{request_id}/decline", {
            "registrationId": self.registration_id, "reason": reason, "signature": self.sign(payload, "decline", None, reason)})
