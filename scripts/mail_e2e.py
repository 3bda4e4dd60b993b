#!/usr/bin/env python3
"""Mail and recovery end to end: the real binary and a real SMTP server (aiosmtpd, from PyPI), every mail parsed with
Python's own `email` package.

Checked: a sign-up's verification mail (multipart/alternative, the product's name, a code and a link) verifies the
address by code and by link, once; a password reset answers the same body in the same time (medians of 20 requests)
for known and unknown addresses and mails only the known; the reset code works once, five wrong codes kill it, every
session ends; a sign-in code opens an `email_code` session, once, and not after its 60 seconds; a recovery code signs
in once and the address is told; an address change mails the new address and tells the old one; an SMTP server that is down loses nothing: the mail
queued while it was down is delivered after the server is SIGKILLed and restarted and the SMTP server is back;
STARTTLS with AUTH (the certificate checked against TOUCHSTONE_SMTP_CA_FILE), implicit TLS (smtps), and a server that
does not offer STARTTLS getting nothing; no code, link token or SMTP password appears in a server log.

Usage: scripts/mail_e2e.py [path/to/touchstone]
"""
import asyncio
import email
import email.policy
import os
import re
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import json

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import free_port, http, wait_for  # noqa: E402

PASSWORD = "correct horse battery"
SMTP_USER, SMTP_PASSWORD = "touchstone", "smtp-secret-p4ss"


def fail(message):
    print(f"mail e2e: FAILED: {message}", flush=True)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def call(method, url, body=None, token=None):
    """(status, json) without raising on 4xx."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


class Inbox:
    """An aiosmtpd handler keeping every message, parsed."""

    def __init__(self):
        self.lock = threading.Lock()
        self.messages = []  # (envelope from, [to], parsed message, authenticated user)

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.original_content or envelope.content, policy=email.policy.default)
        user = session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None
        with self.lock:
            self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), message, user))
        return "250 2.0.0 accepted"

    def to(self, address):
        with self.lock:
            return [entry for entry in self.messages if address in entry[1]]

    def wait(self, address, subject_start, count=1, timeout=20):
        def found():
            matching = [entry for entry in self.to(address) if str(entry[2]["Subject"]).startswith(subject_start)]
            return matching[count - 1] if len(matching) >= count else None
        return wait_for(f"mail #{count} '{subject_start}' to {address}", found, timeout=timeout)


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and auth_data.login == SMTP_USER.encode() and auth_data.password == SMTP_PASSWORD.encode()
    return AuthResult(success=ok, auth_data=auth_data if ok else None)


def text_part(message):
    return message.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")


def html_part(message):
    return message.get_body(preferencelist=("html",)).get_content().replace("\r\n", "\n")


def code_of(message):
    match = re.search(r"^(?:Your code: )?([0-9]{6})$", text_part(message), re.MULTILINE)
    expect(match, f"no code in {text_part(message)!r}")
    return match.group(1)


def token_of(message, name):
    match = re.search(rf"#{name}=([A-Za-z0-9_-]{{43}})", html_part(message))
    expect(match, f"no {name} link in the HTML part")
    return match.group(1)


class Server:
    def __init__(self, binary, work, env_extra):
        self.binary, self.work = binary, work
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, TOUCHSTONE_BCRYPT_COST="4", TOUCHSTONE_LOG_LEVEL="info", **env_extra)
        self.log_path = os.path.join(work, "server.log")
        self.process = None

    def start(self):
        log = open(self.log_path, "a")
        self.process = subprocess.Popen(
            [self.binary, "serve", "--port", str(self.port), "--database", f"sqlite:{self.work}/mail.sqlite"],
            stdout=log, stderr=subprocess.STDOUT, env=self.env)
        wait_for("the server", lambda: http("GET", f"{self.origin}/health").get("status") == "ok", timeout=60)

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def log(self):
        with open(self.log_path) as handle:
            return handle.read()


def sign_up(origin):
    address = f"user-{os.urandom(4).hex()}@example.com"
    answer = http("POST", f"{origin}/v1/users", {"email": address, "password": PASSWORD})
    return address, answer["session"]["token"]


def flows(binary, work):
    """Plain SMTP on loopback (starttls=off): every flow, enumeration, guessing, replay, and SMTP down then up across
    a SIGKILL of the server."""
    inbox = Inbox()
    smtp_port = free_port()
    smtp = Controller(inbox, hostname="127.0.0.1", port=smtp_port)
    smtp.start()
    server = Server(binary, work, {
        "TOUCHSTONE_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}?starttls=off",
        "TOUCHSTONE_MAIL_FROM": "Zürich Bank <no-reply@bank.example>",
        "TOUCHSTONE_RP_NAME": "Zürich Bank",
        "TOUCHSTONE_PUBLIC_URL": "https://login.bank.example",
        "TOUCHSTONE_MAIL_RATE_LIMIT": "100/1h",
        "TOUCHSTONE_RATE_LIMIT_PER_ACCOUNT": "1000/minute",
        "TOUCHSTONE_EMAIL_CODE_TTL_SECONDS": "60",
    })
    secrets = []
    try:
        server.start()
        origin = server.origin

        # A sign-in code asked for now is used only at the end, after its 60 seconds.
        late_address, _ = sign_up(origin)
        call("POST", f"{origin}/v1/email-codes", {"email": late_address})
        late_code = code_of(inbox.wait(late_address, "Your Zürich Bank sign-in code")[2])
        late_since = time.monotonic()
        secrets.append(late_code)

        # Verification by code, once.
        address, token = sign_up(origin)
        sender, recipients, message, _ = inbox.wait(address, "Confirm your email address")
        expect(sender == "no-reply@bank.example" and recipients == [address], f"envelope {sender} -> {recipients}")
        expect(message.get_content_type() == "multipart/alternative", message.get_content_type())
        expect(str(message["Subject"]) == "Confirm your email address for Zürich Bank", str(message["Subject"]))
        expect("Zürich Bank" in str(message["From"]), str(message["From"]))
        expect(message["Message-ID"] and message["Date"], "Message-ID and Date headers")
        code = code_of(message)
        link_token = token_of(message, "verify-email")
        expect(f"https://login.bank.example/#verify-email={link_token}" in html_part(message), "the link points at the public URL")
        secrets += [code, link_token]
        status, answer = call("POST", f"{origin}/v1/email/verification/confirm", {"code": code}, token)
        expect(status == 200 and answer["user"]["emailVerified"] is True, f"verify by code: {status} {answer}")
        status, answer = call("POST", f"{origin}/v1/email/verification/confirm", {"token": link_token})
        expect(status == 400 and answer["error"]["code"] == "invalid_code", f"the used challenge's link: {status} {answer}")

        # Verification by link (another account), once.
        other, other_token = sign_up(origin)
        link_token = token_of(inbox.wait(other, "Confirm your email address")[2], "verify-email")
        secrets.append(link_token)
        status, answer = call("POST", f"{origin}/v1/email/verification/confirm", {"token": link_token})
        expect(status == 200 and answer["user"]["emailVerified"] is True, f"verify by link: {status} {answer}")
        status, _ = call("POST", f"{origin}/v1/email/verification/confirm", {"token": link_token})
        expect(status == 400, "a link works once")

        # Enumeration: the same body, the same time, for known and unknown addresses.
        timings = {"known": [], "unknown": []}
        bodies = set()
        for index in range(20):
            # The same unknown address each time, as the known one: a first request for any address (known or not)
            # starts its mail counter, which costs an insert.
            for kind, target in (("known", other), ("unknown", "nobody@example.com")):
                started = time.perf_counter()
                status, answer = call("POST", f"{origin}/v1/password-resets", {"email": target})
                timings[kind].append(time.perf_counter() - started)
                expect(status == 202, f"reset request for {kind}: {status} {answer}")
                bodies.add(json.dumps(answer, sort_keys=True))
        expect(len(bodies) == 1, f"different answers: {bodies}")
        known, unknown = statistics.median(timings["known"]), statistics.median(timings["unknown"])
        print(f"mail e2e: reset request medians: known {known * 1000:.1f} ms, unknown {unknown * 1000:.1f} ms")
        expect(abs(known - unknown) < 0.010, f"timings differ: known {known:.4f} s, unknown {unknown:.4f} s")
        resets = wait_for("20 reset mails", lambda: len([m for m in inbox.to(other) if str(m[2]["Subject"]).startswith("Reset your")]) >= 20 or None)
        expect(not [m for m in inbox.messages if "nobody@example.com" in m[1]], "a mail went to an unknown address")

        # The last reset's code: five wrong codes kill it; a fresh one works once and ends every session.
        last = inbox.wait(other, "Reset your", count=20)[2]
        code = code_of(last)
        secrets.append(code)
        wrong = "000000" if code != "000000" else "111111"
        for _ in range(5):
            status, answer = call("POST", f"{origin}/v1/password-resets/confirm", {"email": other, "code": wrong, "newPassword": "a new passphrase 1"})
            expect(status == 400 and answer["error"]["code"] == "invalid_code", f"wrong code: {status} {answer}")
        status, answer = call("POST", f"{origin}/v1/password-resets/confirm", {"email": other, "code": code, "newPassword": "a new passphrase 1"})
        expect(status == 400 and answer["error"]["code"] == "invalid_code", "the code after five wrong ones")
        status, _ = call("POST", f"{origin}/v1/password-resets", {"email": other})
        fresh = inbox.wait(other, "Reset your", count=21)[2]
        code = code_of(fresh)
        secrets.append(code)
        status, answer = call("POST", f"{origin}/v1/password-resets/confirm", {"email": other, "code": code, "newPassword": "a new passphrase 1"})
        expect(status == 200 and answer["revokedSessions"] >= 1 and "session" in answer, f"reset: {status} {answer}")
        status, _ = call("GET", f"{origin}/v1/session", token=other_token)
        expect(status == 401, "the old session still works after a reset")
        status, _ = call("POST", f"{origin}/v1/password-resets/confirm", {"email": other, "code": code, "newPassword": "a new passphrase 2"})
        expect(status == 400, "a reset code works twice")
        inbox.wait(other, "Your Zürich Bank password was changed")
        status, _ = call("POST", f"{origin}/v1/sessions", {"email": other, "password": "a new passphrase 1"})
        expect(status == 200, "the new password does not sign in")

        # A sign-in code.
        call("POST", f"{origin}/v1/email-codes", {"email": address})
        code = code_of(inbox.wait(address, "Your Zürich Bank sign-in code")[2])
        secrets.append(code)
        status, answer = call("POST", f"{origin}/v1/email-codes/verify", {"email": address, "code": code})
        expect(status == 200 and answer["session"]["methods"] == ["email_code"], f"email code: {status} {answer}")
        status, _ = call("POST", f"{origin}/v1/email-codes/verify", {"email": address, "code": code})
        expect(status == 400, "a sign-in code works twice")

        # Recovery codes: made with the fresh password session, one signs in once and the address is told.
        _, fresh = call("POST", f"{origin}/v1/sessions", {"email": address, "password": PASSWORD})
        status, answer = call("POST", f"{origin}/v1/recovery-codes", token=fresh["session"]["token"])
        expect(status == 201 and len(answer["codes"]) == 10, f"recovery codes: {status} {answer}")
        recovery = answer["codes"][0]
        secrets.append(recovery)
        status, answer = call("POST", f"{origin}/v1/recovery-codes/verify", {"email": address, "code": recovery.upper()})
        expect(status == 200 and answer["session"]["methods"] == ["recovery_code"], f"recovery sign-in: {status} {answer}")
        status, _ = call("POST", f"{origin}/v1/recovery-codes/verify", {"email": address, "code": recovery})
        expect(status == 400, "a recovery code works twice")
        expect("9 unused codes" in text_part(inbox.wait(address, "A recovery code was used")[2]), "the recovery notice")

        # A new address: a code to it, a notice to the old one, the change on confirmation.
        new_address = f"moved-{os.urandom(4).hex()}@example.com"
        status, _ = call("PUT", f"{origin}/v1/session/email", {"email": new_address}, fresh["session"]["token"])
        expect(status == 202, f"email change: {status}")
        expect(new_address in text_part(inbox.wait(address, "A new email address was asked")[2]), "the notice to the old address")
        code = code_of(inbox.wait(new_address, "Confirm your new email address")[2])
        secrets.append(code)
        status, answer = call("POST", f"{origin}/v1/session/email/confirm", {"code": code}, fresh["session"]["token"])
        expect(status == 200 and answer["user"]["email"] == new_address, f"email change confirm: {status} {answer}")
        address = new_address

        # SMTP down: the mail is queued; the server is killed after its first attempt fails; SMTP and the server come
        # back; the mail arrives (its retry is due 30 s after the failure).
        smtp.stop()
        earlier = len([m for m in inbox.to(address) if str(m[2]["Subject"]).startswith("Your Zürich Bank sign-in code")])
        status, _ = call("POST", f"{origin}/v1/email-codes", {"email": address})
        expect(status == 202, "a request while SMTP is down")
        wait_for("a failed attempt in the log", lambda: "attempt 1 failed, will retry" in server.log(), timeout=20)
        server.kill()
        smtp = Controller(inbox, hostname="127.0.0.1", port=smtp_port)
        smtp.start()
        server.start()
        before = len(inbox.to(address))
        mail = inbox.wait(address, "Your Zürich Bank sign-in code", count=earlier + 1, timeout=60)
        expect(len(inbox.to(address)) == before + 1, "the queued mail was not delivered exactly once")
        secrets.append(code_of(mail[2]))
        print("mail e2e: a mail queued while SMTP was down arrived after a SIGKILL and restart")

        # Expiry: the code asked for at the start, after its 60 seconds.
        time.sleep(max(0, 61 - (time.monotonic() - late_since)))
        status, answer = call("POST", f"{origin}/v1/email-codes/verify", {"email": late_address, "code": late_code})
        expect(status == 400 and answer["error"]["code"] == "invalid_code", f"an expired code: {status} {answer}")

        log = server.log()
        for secret in secrets:
            expect(secret not in log, f"a code or link token appears in the server log")
    except SystemExit:
        print(server.log()[-4000:])
        raise
    finally:
        server.stop()
        smtp.stop()
    print("mail e2e: flows: verification, reset, sign-in codes, recovery codes, email change, enumeration, guessing, replay, expiry, outage: ok")


def tls_scenarios(binary, work):
    """STARTTLS with AUTH, implicit TLS, and a server without STARTTLS."""
    cert, key = os.path.join(work, "smtp-cert.pem"), os.path.join(work, "smtp-key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    for mode in ("starttls", "smtps", "no-starttls"):
        inbox = Inbox()
        port = free_port()
        if mode == "starttls":
            smtp = Controller(inbox, hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True,
                              authenticator=authenticator, auth_required=True, auth_require_tls=True)
            url = f"smtp://{SMTP_USER}:{SMTP_PASSWORD}@localhost:{port}"
        elif mode == "smtps":
            smtp = Controller(inbox, hostname="127.0.0.1", port=port, ssl_context=context,
                              authenticator=authenticator, auth_required=True, auth_require_tls=False)
            url = f"smtps://{SMTP_USER}:{SMTP_PASSWORD}@localhost:{port}"
        else:
            smtp = Controller(inbox, hostname="127.0.0.1", port=port)
            url = f"smtp://localhost:{port}"
        smtp.start()
        folder = os.path.join(work, mode)
        os.makedirs(folder)
        server = Server(binary, folder, {"TOUCHSTONE_SMTP_URL": url, "TOUCHSTONE_SMTP_CA_FILE": cert})
        try:
            server.start()
            address, _ = sign_up(server.origin)
            if mode == "no-starttls":
                wait_for("the refusal in the log", lambda: "does not offer STARTTLS" in server.log(), timeout=20)
                expect(not inbox.messages, "a mail went out without TLS")
            else:
                _, _, message, user = inbox.wait(address, "Confirm your email address")
                expect(user == SMTP_USER, f"{mode}: not authenticated ({user})")
                code_of(message)
            expect(SMTP_PASSWORD not in server.log(), "the SMTP password appears in the server log")
            print(f"mail e2e: {mode}: ok")
        except SystemExit:
            print(server.log()[-4000:])
            raise
        finally:
            server.stop()
            smtp.stop()


class SlowInbox(Inbox):
    """An SMTP server that takes its time over the final dot: a delivery is in flight for a few seconds."""

    def __init__(self, delay):
        super().__init__()
        self.delay = delay
        self.data_started = threading.Event()

    async def handle_DATA(self, server, session, envelope):
        self.data_started.set()
        await asyncio.sleep(self.delay)
        return await super().handle_DATA(server, session, envelope)


def sigterm_scenario(binary, work):
    """Issue #44 item 1: SIGTERM while a mail is being handed to SMTP lets the delivery finish before the process exits;
    a delivery that cannot finish (an SMTP server that hangs) is cut off after TOUCHSTONE_SHUTDOWN_GRACE_SECONDS, not
    after the SMTP timeouts (two minutes), and the mail goes after the restart."""
    inbox = SlowInbox(delay=3)
    smtp_port = free_port()
    smtp = Controller(inbox, hostname="127.0.0.1", port=smtp_port)
    smtp.start()
    server = Server(binary, work, {"TOUCHSTONE_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}?starttls=off",
                                   "TOUCHSTONE_MAIL_FROM": "no-reply@bank.example", "TOUCHSTONE_SHUTDOWN_GRACE_SECONDS": "8",
                                   "TOUCHSTONE_MAIL_LEASE_SECONDS": "10"})
    try:
        server.start()
        address, _ = sign_up(server.origin)  # its verification mail goes to the slow server
        expect(inbox.data_started.wait(30), "the verification mail never reached DATA")
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=60)
        expect(len(inbox.to(address)) == 1, "SIGTERM cut off the mail in flight instead of letting it finish")

        # An SMTP server that hangs over the final dot: the shutdown stops waiting after the grace period.
        inbox.delay, inbox.data_started = 600, threading.Event()
        server.start()
        hung, _ = sign_up(server.origin)
        expect(inbox.data_started.wait(30), "the second verification mail never reached DATA")
        began = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=60)  # generous: the grace is 8 s, the SMTP timeout for the dot 120 s
        except subprocess.TimeoutExpired:
            fail("SIGTERM waited on a hung SMTP server past the grace period")
        stopped = time.monotonic() - began
        expect(not inbox.to(hung), "the hung delivery was not cut off")
        inbox.delay = 0
        server.start()
        inbox.wait(hung, "Confirm your email address", timeout=60)  # after the dead sender's lease (10 s)
        print(f"mail e2e: SIGTERM let a mail in flight finish; a hung delivery was cut off ({stopped:.1f} s) and sent after the restart",
              flush=True)
    finally:
        server.stop()
        smtp.stop()


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/debug/touchstone")
    work = tempfile.mkdtemp(prefix="touchstone-mail-e2e.")
    try:
        os.makedirs(os.path.join(work, "flows"))
        flows(binary, os.path.join(work, "flows"))
        tls_scenarios(binary, work)
        os.makedirs(os.path.join(work, "sigterm"))
        sigterm_scenario(binary, os.path.join(work, "sigterm"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("mail e2e: passed")


if __name__ == "__main__":
    main()
