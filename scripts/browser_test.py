#!/usr/bin/env python3
"""A real browser against the real server: headless Chromium driven through WebDriver (plain HTTP + JSON), with a
WebDriver virtual authenticator (CTAP2, internal transport, resident keys, user verification).

It signs up on the page, adds a passkey, signs out, signs in with the passkey, checks the page shows the user,
approves a transaction confirmation (made by the app's backend with an admin key) with the passkey, and saves a
screenshot of the signed-in page. It fails loudly when Chromium or chromedriver is missing: it never passes
without having run the browser.

Usage: scripts/browser_test.py [path/to/touchstone] [screenshot.png]
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def fail(message):
    print(f"browser test: FAILED: {message}", flush=True)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, timeout=30, token=None):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"{method} {url} -> {error.code}: {error.read().decode(errors='replace')[:500]}")


def wait_for(description, predicate, timeout=20):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = predicate()
            if last:
                return last
        except Exception as error:  # the page may be mid-update
            last = error
        time.sleep(0.1)
    fail(f"timed out waiting for {description} (last: {last!r})")


class Browser:
    def __init__(self, driver_url, session_id):
        self.base = f"{driver_url}/session/{session_id}"

    def call(self, method, path, body=None):
        return http(method, self.base + path, body)["value"] if method != "DELETE" else http(method, self.base + path)

    def element(self, css):
        return self.call("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def type(self, css, text):
        self.call("POST", f"/element/{self.element(css)}/value", {"text": text})

    def click(self, css):
        self.call("POST", f"/element/{self.element(css)}/click", {})

    def script(self, source):
        return self.call("POST", "/execute/sync", {"script": source, "args": []})

    def text(self, element_id):
        return self.script(f"return document.getElementById({json.dumps(element_id)}).textContent")

    def visible(self, element_id):
        return self.script(f"return !document.getElementById({json.dumps(element_id)}).hidden")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/touchstone"
    screenshot_path = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "artifacts/browser-signed-in.png")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        fail("Chromium and chromedriver are required (Debian: apt-get install chromium chromium-driver)")
    if not os.access(binary, os.X_OK):
        fail(f"{binary} is not built (run swift build)")

    work = tempfile.mkdtemp(prefix="touchstone-browser-")
    port, driver_port = free_port(), free_port()
    origin = f"http://localhost:{port}"
    server_log = open(os.path.join(work, "server.log"), "w")
    server = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--database", f"sqlite:{work}/touchstone.sqlite",
         "--rp-id", "localhost", "--origin", origin],
        stdout=server_log, stderr=subprocess.STDOUT,
    )
    driver = subprocess.Popen([chromedriver, f"--port={driver_port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    driver_url = f"http://127.0.0.1:{driver_port}"
    session_id = None
    try:
        wait_for("the server", lambda: http("GET", f"{origin}/health").get("status") == "ok")
        wait_for("chromedriver", lambda: http("GET", f"{driver_url}/status")["value"]["ready"])
        capabilities = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=900,1000"]},
        }}}
        session_id = http("POST", f"{driver_url}/session", capabilities, timeout=60)["value"]["sessionId"]
        browser = Browser(driver_url, session_id)
        print(f"browser test: {subprocess.run([chromium, '--version'], capture_output=True, text=True).stdout.strip()}")

        # The WebDriver WebAuthn extension: a platform authenticator that verifies the user.
        authenticator = browser.call("POST", "/webauthn/authenticator", {
            "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
            "isUserVerified": True, "automaticPresenceSimulation": True,
        })

        email = "browser@example.com"
        browser.call("POST", "/url", {"url": origin + "/"})
        wait_for("the page", lambda: browser.visible("signed-out"))

        browser.type("#sign-up-email", email)
        browser.type("#sign-up-password", "correct horse battery")
        browser.click("#sign-up-form button")
        wait_for("the signed-in view after sign-up", lambda: browser.text("who") == email)
        print("browser test: signed up")

        browser.click("#add-passkey")
        wait_for("the passkey in the list", lambda: "Passkey on this device" in browser.text("passkeys"))
        credentials = browser.call("GET", f"/webauthn/authenticator/{authenticator}/credentials")
        if len(credentials) != 1 or not credentials[0].get("isResidentCredential"):
            fail(f"expected one resident credential in the virtual authenticator, got {credentials}")
        print("browser test: passkey registered")

        browser.click("#sign-out")
        wait_for("the signed-out view", lambda: browser.visible("signed-out") and not browser.visible("signed-in"))
        print("browser test: signed out")

        browser.click("#passkey-sign-in")
        wait_for("the signed-in view after the passkey sign-in",
                 lambda: browser.text("who") == email and browser.text("methods") == "passkey")
        if browser.text("status") != "Signed in with a passkey.":
            fail(f"unexpected status after the passkey button: {browser.text('status')!r}")
        print("browser test: signed in with the passkey (button)")

        # A new page load is signed out (the token lived in the old page's memory) and arms autofill: conditional
        # mediation, which the virtual authenticator answers with the resident passkey.
        browser.call("POST", "/url", {"url": origin + "/"})
        wait_for("the signed-in view after the autofill sign-in",
                 lambda: browser.text("who") == email and browser.text("status") == "Signed in with a passkey (autofill).")
        print("browser test: signed in with the passkey (autofill / conditional mediation)")
        storage = browser.script("return JSON.stringify([localStorage.length, sessionStorage.length, document.cookie])")
        if storage != '[0,0,""]':
            fail(f"the page must not keep tokens in storage or script-readable cookies: {storage}")

        # A transaction confirmation made by the app's backend (an admin key), approved on the page with the passkey.
        admin_key = subprocess.run(
            [binary, "admin", "create-key", "--name", "browser-test", "--database", f"sqlite:{work}/touchstone.sqlite"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        users = http("GET", f"{origin}/v1/admin/users?email={email}", token=admin_key)["users"]
        created = http("POST", f"{origin}/v1/confirmations", {
            "summary": "Pay €120.00 to ACME Ltd", "userId": users[0]["id"],
            "details": {"amount": "120.00", "currency": "EUR", "payee": "ACME Ltd"},
        }, token=admin_key)
        confirmation_id = created["confirmation"]["id"]
        browser.type("#confirmation-id", confirmation_id)
        browser.click("#confirmation-form button")
        wait_for("the request's summary", lambda: browser.text("confirmation-summary") == "Pay €120.00 to ACME Ltd")
        if "ACME Ltd" not in browser.text("confirmation-details"):
            fail(f"the details are not shown: {browser.text('confirmation-details')!r}")
        browser.click("#approve-passkey")
        wait_for("the approval", lambda: browser.text("status") == "Approved: Pay €120.00 to ACME Ltd")
        answer = http("GET", f"{origin}/v1/confirmations/{confirmation_id}", token=admin_key)["confirmation"]
        if answer["status"] != "approved" or answer["method"] != "passkey":
            fail(f"the server does not have the passkey approval: {answer}")
        evidence = http("GET", f"{origin}/v1/confirmations/{confirmation_id}/evidence", token=admin_key)["evidence"]
        if evidence["method"] != "passkey" or not evidence.get("authenticatorData"):
            fail(f"unexpected evidence: {evidence}")
        print("browser test: a confirmation shown from its payload and approved with the passkey")

        os.makedirs(os.path.dirname(screenshot_path), exist_ok=True)
        with open(screenshot_path, "wb") as file:
            file.write(base64.b64decode(browser.call("GET", "/screenshot")))
        print(f"browser test: screenshot of the signed-in page: {screenshot_path}")
        print("browser test: sign-up, passkey registration, sign-out, passkey sign-in and a passkey approval: ok")
    except RuntimeError as error:
        status = browser.text("status") if session_id else ""
        fail(f"{error} (page status: {status!r})")
    finally:
        if session_id:
            try:
                http("DELETE", f"{driver_url}/session/{session_id}")
            except Exception:
                pass
        driver.terminate()
        server.terminate()
        server.wait(timeout=10)
        server_log.close()


if __name__ == "__main__":
    main()
