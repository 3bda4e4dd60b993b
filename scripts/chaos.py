#!/usr/bin/env python3
"""The chaos test (issue #44 item 8): nothing acknowledged is lost while instances die and the database stops.

Two instances of the real binary on one PostgreSQL cluster, behind this script's own round-robin client; a mixed load
from several workers (device-key sign-ins, passkey sign-ins, confirmations approved with the device key, password
resets mailed to an aiosmtpd server, sign-in requests approved by a simulated phone and collected by the browser's
poll); a webhook endpoint whose receiver verifies every message with the Standard Webhooks library. Meanwhile one
instance is SIGKILLed every few seconds and restarted, and PostgreSQL is stopped once for a few seconds.

At the end, from the servers, the database and the receivers:
- every acknowledged write is present (each session a 2xx opened answers, each approved confirmation);
- every webhook message the outbox holds for the endpoint was delivered and verified (each event id accounted for);
- every acknowledged password reset produced its mail, once (one Message-ID per request; a resend of the same message
  after a kill is counted apart, as the at-least-once it is);
- no sign-in request approval opened two sessions;
- no answer but 503 `storage_unavailable` while the database was down, and no 5xx outside that window.
The last line is `chaos: ... lost 0` (the script exits 1 on any loss or violation).

Usage: scripts/chaos.py path/to/touchstone [seconds of load, default 100]
"""
import glob
import http.server as httpserver
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from email import message_from_bytes

from aiosmtpd.controller import Controller
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
from chaos_load import Client, Ledger, User, collect, fail, worker  # noqa: E402

KEK = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# MARK: The receivers


class Inbox:
    """aiosmtpd's handler: every message, by recipient."""

    def __init__(self):
        self.lock = threading.Lock()
        self.messages = []  # (recipient, subject, message-id)

    async def handle_DATA(self, server, session, envelope):
        message = message_from_bytes(envelope.content)
        with self.lock:
            for recipient in envelope.rcpt_tos:
                self.messages.append((recipient, str(message["Subject"]), str(message["Message-ID"])))
        return "250 OK"

    def resets(self, address):
        with self.lock:
            return [m[2] for m in self.messages if m[0] == address and "reset" in m[1].lower()]


class Hooks(httpserver.BaseHTTPRequestHandler):
    lock = threading.Lock()
    secret = None
    received = {}  # webhook-id -> times received (each verified)
    unverified = 0

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            Webhook(Hooks.secret).verify(body, headers)
            with Hooks.lock:
                Hooks.received[headers["webhook-id"]] = Hooks.received.get(headers["webhook-id"], 0) + 1
            self.send_response(204)
        except WebhookVerificationError:
            with Hooks.lock:
                Hooks.unverified += 1
            self.send_response(400)
        self.end_headers()

    def log_message(self, *args):
        pass


# MARK: The servers


class Instance:
    def __init__(self, binary, url, env, log_path):
        self.binary, self.url, self.env, self.log_path = binary, url, env, log_path
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.process = None
        self.up = False

    def start(self):
        log = open(self.log_path, "a")
        self.process = subprocess.Popen([self.binary, "serve", "--port", str(self.port), "--database", self.url],
                                        stdout=log, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                time.sleep(1)  # it could not reach the database yet: start again
                self.process = subprocess.Popen([self.binary, "serve", "--port", str(self.port), "--database", self.url],
                                                stdout=log, stderr=subprocess.STDOUT, env=self.env)
                continue
            try:
                with urllib.request.urlopen(f"{self.origin}/health/ready", timeout=2) as answer:
                    if answer.status == 200:
                        self.up = True
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        fail(f"the instance on {self.port} did not become ready")

    def kill(self):
        self.up = False
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        self.up = False
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def psql(pg_bin, port, query):
    result = subprocess.run([os.path.join(pg_bin, "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", "touchstone", "-d", "touchstone",
                             "-Atc", query], capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"psql: {result.stderr}")
    return [line for line in result.stdout.splitlines() if line]


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/debug/touchstone")
    duration = float(sys.argv[2]) if len(sys.argv) > 2 else 100.0
    seed = int(os.environ.get("CHAOS_SEED", str(random.randrange(1 << 31))))
    random.seed(seed)
    print(f"chaos: seed {seed} (replay the schedule with CHAOS_SEED={seed}), {duration:.0f} s of load", flush=True)
    work = tempfile.mkdtemp(prefix="touchstone-chaos-")
    pg_dir = tempfile.mkdtemp(prefix="touchstone-chaos-pg-")
    pg_port = free_port()
    instances = []
    smtp = None
    hooks = None
    try:
        started = subprocess.run([os.path.join(SCRIPTS, "postgres.sh"), "start", pg_dir, str(pg_port)], capture_output=True, text=True)
        if started.returncode != 0:
            fail(f"PostgreSQL did not start: {started.stderr}")
        url = started.stdout.strip()
        pg_bin = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
        inbox = Inbox()
        smtp_port = free_port()
        smtp = Controller(inbox, hostname="127.0.0.1", port=smtp_port)
        smtp.start()
        hooks_port = free_port()
        hooks = httpserver.ThreadingHTTPServer(("127.0.0.1", hooks_port), Hooks)
        threading.Thread(target=hooks.serve_forever, daemon=True).start()

        origin = "http://localhost"
        env = {**os.environ, "TOUCHSTONE_BCRYPT_COST": "4", "TOUCHSTONE_KEY_ENCRYPTION_KEY": KEK, "TOUCHSTONE_RATE_LIMITS": "off",
               "TOUCHSTONE_MAIL_RATE_LIMIT": "100000/1h", "TOUCHSTONE_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}?starttls=off",
               "TOUCHSTONE_MAIL_FROM": "no-reply@chaos.example", "TOUCHSTONE_MAIL_LEASE_SECONDS": "15", "TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE": "loopback",
               "TOUCHSTONE_RP_ID": "localhost", "TOUCHSTONE_ORIGINS": origin, "TOUCHSTONE_LOG_LEVEL": "warning"}
        subprocess.run([binary, "migrate", "--database", url], env=env, check=True, capture_output=True)
        created = subprocess.run([binary, "webhooks", "create", "--url", f"http://127.0.0.1:{hooks_port}/hook", "--event", "session.created",
                                  "--event", "confirmation.approved", "--event", "sign_in_request.created", "--database", url],
                                 env=env, capture_output=True, text=True)
        if created.returncode != 0:
            fail(f"webhooks create: {created.stderr}")
        endpoint = json.loads(created.stdout)
        Hooks.secret = endpoint["secret"]
        for index in range(2):
            instance = Instance(binary, url + "&acquire_timeout=1", env, os.path.join(work, f"instance-{index}.log"))
            instance.start()
            instances.append(instance)
        client = Client(instances)
        users = [User(client, index, origin) for index in range(4)]
        ledger = Ledger()
        stop = threading.Event()
        threads = [threading.Thread(target=worker, args=(client, user, ledger, stop), daemon=True) for user in users]
        began = time.monotonic()
        for thread in threads:
            thread.start()

        # The faults: a SIGKILL every few seconds (alternating instances, restarted after a moment), and once, a third
        # of the way in, PostgreSQL stopped for a few seconds.
        kills = 0
        outage = None
        victim = 0
        while time.monotonic() - began < duration:
            if outage is None and time.monotonic() - began > duration / 3:
                down_at = time.monotonic()
                subprocess.run([os.path.join(SCRIPTS, "postgres.sh"), "stop", pg_dir], capture_output=True)
                stopped_at = time.monotonic()
                time.sleep(random.uniform(3, 5))
                restart_at = time.monotonic()
                restarted = subprocess.run([os.path.join(SCRIPTS, "postgres.sh"), "start", pg_dir, str(pg_port)], capture_output=True, text=True)
                if restarted.returncode != 0:
                    fail(f"PostgreSQL did not start again: {restarted.stderr}")
                started_at = time.monotonic()
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and not all(ready(i) for i in instances):
                    time.sleep(0.1)
                outage = (down_at, stopped_at, restart_at, started_at, time.monotonic())
                print(f"chaos: PostgreSQL down {started_at - stopped_at:.1f} s, both instances ready "
                      f"{outage[3] - started_at:.1f} s after its start", flush=True)
                continue
            time.sleep(random.uniform(3, 6))
            instance = instances[victim % 2]
            victim += 1
            instance.kill()
            kills += 1
            time.sleep(random.uniform(0.3, 1.5))
            instance.start()
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
        print(f"chaos: {kills} SIGKILLs; load stopped after {time.monotonic() - began:.0f} s", flush=True)

        # Each approved sign-in request polled again on both instances: a second session would be a double redemption.
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda approved: collect(client, ledger, approved, attempts=2), ledger.requests))
        problems = []
        doubles = {rid: len(tokens) for rid, tokens in ledger.collected.items() if len(tokens) > 1}
        if doubles:
            problems.append(f"sign-in requests whose approval opened more than one session: {doubles}")
        uncollected = [rid for rid, _ in ledger.requests if rid not in ledger.collected and rid not in ledger.unanswered]
        if uncollected:
            problems.append(f"{len(uncollected)} approved sign-in requests never handed out their session")

        # Every acknowledged session and approval is there.
        with ThreadPoolExecutor(8) as pool:
            found = list(pool.map(lambda t: client.must("GET", "/v1/session", token=t, expect=(200, 401)).get("session") is not None,
                                  ledger.sessions))
        missing_sessions = [t for t, ok in zip(ledger.sessions, found) if not ok]
        if missing_sessions:
            problems.append(f"{len(missing_sessions)} acknowledged sessions are missing")
        def approved(entry):
            answer = client.must("GET", f"/v1/confirmations/{entry[1]}", token=entry[0], expect=(200, 404))
            return (answer.get("confirmation") or answer).get("status") == "approved"
        with ThreadPoolExecutor(8) as pool:
            states = list(pool.map(approved, ledger.confirmations))
        missing_confirmations = [entry[1] for entry, ok in zip(ledger.confirmations, states) if not ok]
        if missing_confirmations:
            problems.append(f"{len(missing_confirmations)} acknowledged approvals are missing")

        # Mail: one message per acknowledged reset (the deferred work and the queue drained).
        def mails_done():
            return all(len(set(inbox.resets(address))) >= count for address, count in ledger.resets.items())
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not mails_done():
            time.sleep(0.5)
        time.sleep(3)  # a duplicate would come now
        acknowledged_mail = sum(ledger.resets.values())
        distinct_mail = sum(len(set(inbox.resets(address))) for address in ledger.resets)
        resent = sum(len(inbox.resets(address)) - len(set(inbox.resets(address))) for address in ledger.resets)
        # Every acknowledged reset mailed; beyond those, at most the requests whose answer a kill cut off (done, unheard).
        for address, count in ledger.resets.items():
            mailed = len(set(inbox.resets(address)))
            if not count <= mailed <= count + ledger.unanswered_resets.get(address, 0):
                problems.append(f"password resets to {address}: {count} acknowledged "
                                f"({ledger.unanswered_resets.get(address, 0)} unanswered), {mailed} mailed")

        # Webhooks: every message the outbox holds for the endpoint delivered and verified.
        def outbox():
            return set(psql(pg_bin, pg_port, f"SELECT event_id FROM webhook_messages WHERE endpoint_id = '{endpoint['id']}'"))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with Hooks.lock:
                delivered = set(Hooks.received)
            if outbox() <= delivered:
                break
            time.sleep(0.5)
        events = outbox()
        with Hooks.lock:
            delivered = set(Hooks.received)
            redelivered = sum(n - 1 for n in Hooks.received.values())
        if not events <= delivered:
            problems.append(f"webhooks: {len(events - delivered)} of {len(events)} events never delivered")
        if Hooks.unverified:
            problems.append(f"webhooks: {Hooks.unverified} messages did not verify")
        expected_hooks = len(ledger.sessions) + len(ledger.confirmations)
        if len(events) < expected_hooks:
            problems.append(f"webhooks: {len(events)} events in the outbox for {expected_hooks} acknowledged sign-ins and approvals")

        # Answers: 503 storage_unavailable only, and only around the outage; no other 5xx.
        down_at, stopped_at, restart_at, started_at, ready_at = outage
        outage_answers = 0
        for at, status, code, what in client.answers:
            # While the database was surely down (stopped, not yet being started), nothing is acknowledged.
            if stopped_at + 0.5 <= at <= restart_at and status in (200, 201, 202):
                problems.append(f"{what} answered {status} while PostgreSQL was down")
            if status is not None and status >= 500:
                if down_at <= at <= ready_at + 2 and status == 503 and code == "storage_unavailable":
                    outage_answers += 1
                else:
                    problems.append(f"{what} answered {status} {code} at {at - began:.1f} s (outage {stopped_at - began:.1f}–{ready_at - began:.1f} s)")
        acknowledged = len(ledger.sessions) + len(ledger.confirmations) + acknowledged_mail
        unmailed = sum(max(0, count - len(set(inbox.resets(address)))) for address, count in ledger.resets.items())
        present = acknowledged - len(missing_sessions) - len(missing_confirmations) - unmailed
        lost = acknowledged - present + len(events - delivered)
        for problem in problems[:20]:
            print(f"chaos: {problem}", flush=True)
        print(f"chaos: {len(client.answers)} answers, {outage_answers} 503 storage_unavailable during the outage; "
              f"sessions {len(ledger.sessions)}, approvals {len(ledger.confirmations)}, sign-in requests {len(ledger.requests)}, "
              f"resets {acknowledged_mail} acknowledged, {distinct_mail} mailed (resent {resent}); webhooks {len(delivered & events)}/{len(events)} delivered "
              f"(redelivered {redelivered})", flush=True)
        print(f"chaos: acknowledged {acknowledged}, present {present}, delivered {len(delivered & events)}, lost {lost}", flush=True)
        if problems or lost:
            sys.exit(1)
    finally:
        for instance in instances:
            instance.stop()
        if smtp:
            smtp.stop()
        if hooks:
            hooks.shutdown()
        subprocess.run([os.path.join(SCRIPTS, "postgres.sh"), "stop", pg_dir], capture_output=True)
        shutil.rmtree(pg_dir, ignore_errors=True)
        if os.environ.get("CHAOS_KEEP"):
            print(f"chaos: logs kept in {work}", flush=True)
        else:
            shutil.rmtree(work, ignore_errors=True)


def ready(instance):
    try:
        with urllib.request.urlopen(f"{instance.origin}/health/ready", timeout=2) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError):
        return False


if __name__ == "__main__":
    main()
