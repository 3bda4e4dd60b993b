#!/usr/bin/env python3
"""A real browser against the real server: headless Chromium driven through WebDriver (plain HTTP + JSON), with a
WebDriver virtual authenticator (CTAP2, internal transport, resident keys, user verification).

It signs up on the page, adds a passkey, signs out, signs in with the passkey, checks the page shows the user,
approves a transaction confirmation (made by the app's backend with an admin key) with the passkey, and saves a
screenshot of the signed-in page. Then the admin console: after a scripted load (password and device-key sign-ins,
some failing), it signs in with an admin key, checks the dashboard charts the load, finds the user, revokes their
device and sees the audit event appear, changes the runtime policy, and saves a screenshot of the dashboard
(admin-dashboard.png beside the first; those steps are in browser_admin.py). It fails loudly when Chromium or chromedriver is missing: it never passes
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
import urllib.parse
import urllib.request

import datetime
import struct
import zlib

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

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

    def clear(self, css):
        self.call("POST", f"/element/{self.element(css)}/clear", {})

    def accept_alert(self):
        # The console asks before every destructive action (window.confirm).
        wait_for("the confirmation dialog", lambda: self.call("GET", "/alert/text") is not None)
        self.call("POST", "/alert/accept", {})


def metadata_service(work):
    """A metadata service of the test's own: a P-256 root (written where TOUCHSTONE_MDS_ROOTS points) and an RSA
    BLOB signer it certifies. Returns the signer's key and certificate."""
    now = datetime.datetime.now(datetime.timezone.utc)
    root_key = ec.generate_private_key(ec.SECP256R1())
    root_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Browser test metadata root")])
    root = (x509.CertificateBuilder().subject_name(root_name).issuer_name(root_name).public_key(root_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=60))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                                         encipher_only=False, decipher_only=False), critical=True)
            .sign(root_key, hashes.SHA256()))
    signer_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signer = (x509.CertificateBuilder()
              .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Browser test metadata BLOB signer")]))
              .issuer_name(root_name).public_key(signer_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
              .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
              .sign(root_key, hashes.SHA256()))
    with open(os.path.join(work, "mds-root.pem"), "wb") as file:
        file.write(root.public_bytes(serialization.Encoding.PEM))
    return signer_key, signer


def png_1x1():
    """A one-pixel PNG (what a metadata icon is: a data: URL of an image)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0))
    raw += chunk(b"IDAT", zlib.compress(b"\x00\x2a\x6b\xd4\xff")) + chunk(b"IEND", b"")
    return "data:image/png;base64," + base64.b64encode(raw).decode()


def authenticator_metadata(browser, origin, admin_key, email, signer_key, signer, work):
    """A BLOB describing the virtual authenticator's model, loaded by the server and shown on the page."""
    users = http("GET", f"{origin}/v1/admin/users?email={urllib.parse.quote(email)}", token=admin_key)["users"]
    detail = http("GET", f"{origin}/v1/admin/users/{users[0]['id']}", token=admin_key)
    aaguid = detail["passkeys"][0]["aaguid"]
    if aaguid == "00000000-0000-0000-0000-000000000000":
        fail("Chromium's virtual authenticator reported no AAGUID: metadata cannot name it")
    today = datetime.datetime.now(datetime.timezone.utc).date()
    payload = {
        "legalHeader": "Browser test metadata: not the FIDO Alliance's.",
        "no": 1,
        "nextUpdate": (today + datetime.timedelta(days=30)).isoformat(),
        "entries": [{
            "aaguid": aaguid,
            "metadataStatement": {"description": "Touchstone Browser Test Key", "icon": png_1x1(),
                                  "attestationRootCertificates": [], "schema": 3, "protocolFamily": "fido2"},
            "statusReports": [{"status": "FIDO_CERTIFIED_L1", "effectiveDate": (today - datetime.timedelta(days=100)).isoformat()}],
            "timeOfLastStatusChange": (today - datetime.timedelta(days=100)).isoformat(),
        }],
    }
    x5c = [base64.b64encode(signer.public_bytes(serialization.Encoding.DER)).decode()]
    blob = jwt.encode(payload, signer_key, algorithm="RS256", headers={"typ": "JWT", "x5c": x5c})
    with open(os.path.join(work, "mds.jwt"), "w") as file:
        file.write(blob)
    report = http("POST", f"{origin}/v1/admin/authenticator-metadata/refresh", token=admin_key)
    if report.get("number") != 1 or report.get("entries") != 1:
        fail(f"the server did not load the BLOB: {report}")
    # A new page load signs in again (autofill) and lists the passkey with the metadata's name and icon.
    browser.call("POST", "/url", {"url": origin + "/"})
    wait_for("the metadata's name in the passkey list", lambda: "Touchstone Browser Test Key" in browser.text("passkeys"))
    loaded = wait_for("the metadata's icon", lambda: browser.script(
        "const image = document.querySelector('#passkeys img.authenticator-icon');"
        "return image && image.complete ? image.naturalWidth : 0;"))
    if loaded != 1:
        fail(f"the icon did not load (naturalWidth {loaded})")
    print("browser test: a metadata BLOB signed with PyJWT loaded; the page shows the authenticator's name and icon")


def signals(browser, origin, admin_key, email, authenticator):
    """The Signal API: the page tells Chromium's passkey manager what the server knows (spied on, then passed on)."""
    supported = browser.script("""
        window.__signals = [];
        window.__creates = [];
        const create = navigator.credentials.create.bind(navigator.credentials);
        navigator.credentials.create = (options) => { window.__creates.push(options.mediation || "modal"); return create(options); };
        const names = ["signalUnknownCredential", "signalAllAcceptedCredentials", "signalCurrentUserDetails"];
        const present = names.filter((name) => typeof PublicKeyCredential[name] === "function");
        for (const name of present) {
            const original = PublicKeyCredential[name];
            PublicKeyCredential[name] = (options) => {
                window.__signals.push({ name, options });
                return original.call(PublicKeyCredential, options);
            };
        }
        return present;""")
    if len(supported) < 3:
        print(f"browser test: this Chromium lacks part of the Signal API ({supported}); its checks are skipped")
        return
    user = http("GET", f"{origin}/v1/admin/users?email={urllib.parse.quote(email)}", token=admin_key)["users"][0]
    passkey = http("GET", f"{origin}/v1/admin/users/{user['id']}", token=admin_key)["passkeys"][0]
    # The server forgets the passkey (an admin removes it); the authenticator still has it.
    http("DELETE", f"{origin}/v1/admin/passkeys/{passkey['id']}", token=admin_key)
    browser.click("#sign-out")
    wait_for("the signed-out view", lambda: browser.visible("signed-out"))
    browser.click("#passkey-sign-in")
    wait_for("the refused sign-in", lambda: "not registered" in browser.text("status"))
    sent = browser.script("return window.__signals")
    unknown = [s for s in sent if s["name"] == "signalUnknownCredential"]
    if not unknown or unknown[0]["options"] != {"rpId": "localhost", "credentialId": passkey["credentialId"]}:
        fail(f"expected signalUnknownCredential for {passkey['credentialId']}, got {sent}")
    print("browser test: Signal API: a passkey the server no longer knows is reported with signalUnknownCredential")
    # A password sign-in: the page lists what the server accepts (nothing now) and the user's name.
    browser.type("#sign-in-email", email)
    browser.type("#sign-in-password", "correct horse battery")
    browser.click("#sign-in-form button")
    wait_for("the signed-in view", lambda: browser.text("who") == email)
    wait_for("the accepted-credentials signal", lambda: any(
        s["name"] == "signalAllAcceptedCredentials" for s in browser.script("return window.__signals")))
    sent = browser.script("return window.__signals")
    # The first list after the password sign-in (an automatic upgrade may add a passkey and signal again).
    accepted = [s for s in sent if s["name"] == "signalAllAcceptedCredentials"][0]["options"]
    handle = base64.urlsafe_b64encode(user["id"].encode()).decode().rstrip("=")
    if accepted != {"rpId": "localhost", "userId": handle, "allAcceptedCredentialIds": []}:
        fail(f"unexpected signalAllAcceptedCredentials: {accepted}")
    details = [s for s in sent if s["name"] == "signalCurrentUserDetails"]
    if not details or details[-1]["options"]["name"] != email:
        fail(f"expected signalCurrentUserDetails with the email, got {details}")
    # Chromium passes the signals on to the authenticator: the credential the server forgot is gone from it.
    left = browser.call("GET", f"/webauthn/authenticator/{authenticator}/credentials")
    if left:
        fail(f"the virtual authenticator still holds the forgotten passkey: {left}")
    print("browser test: Signal API: accepted credentials and user details signalled; the authenticator dropped the passkey")

    # Automatic passkey upgrade: the user has no passkey left and just signed in with a password; where Chromium reports
    # conditional create, the page must have asked for one.
    conditional = browser.call("POST", "/execute/async", {"script": """
        const done = arguments[arguments.length - 1];
        if (!PublicKeyCredential.getClientCapabilities) { done(null); return; }
        PublicKeyCredential.getClientCapabilities().then((c) => done(Boolean(c.conditionalCreate)));""", "args": []})
    if conditional:
        wait_for("the conditional create request", lambda: "conditional" in browser.script("return window.__creates"))
        made = [p for p in http("GET", f"{origin}/v1/admin/users/{user['id']}", token=admin_key)["passkeys"]
                if p["createdVia"] == "conditional"]
        print(f"browser test: automatic upgrade: the page asked for a conditional create "
              f"({'Chromium made the passkey' if made else 'Chromium did not complete it without a saved password'})")
    else:
        print("browser test: this Chromium does not report conditional create; the automatic upgrade is not exercised")


def phone_flow(browser, origin):
    """"Sign in with your phone" on the web page, by its labels: the number shown large and a QR code that a real decoder
    (zxing-cpp) reads as the request's sign-in code; a phone written in Python (scripts/phone.py) picks the number and
    signs; the page signs in."""
    import io
    import zxingcpp
    from PIL import Image
    from phone import Phone

    address = "phone-flow@example.com"
    http("POST", f"{origin}/v1/users", {"email": address, "password": "correct horse battery"})
    phone = Phone(origin, address, "correct horse battery", "browser-test-phone-2")
    browser.call("POST", "/url", {"url": origin + "/"})
    wait_for("the page", lambda: browser.visible("signed-out"))
    label = browser.call("GET", f"/element/{browser.element('#phone-sign-in')}/computedlabel")
    if label != "Sign in with your phone":
        fail(f"the phone button's accessible name is {label!r}")
    browser.type("#sign-in-email", address)
    browser.click("#phone-sign-in")
    number = wait_for("the number", lambda: browser.visible("phone-sign-in-panel") and browser.text("phone-number").strip())
    if browser.call("GET", f"/element/{browser.element('#phone-number')}/computedlabel") != "The number to pick on your phone":
        fail("the number has no accessible name")
    browser.script("document.querySelector('#phone-qr svg').scrollIntoView({block: 'center'})")
    png = base64.b64decode(browser.call("GET", f"/element/{browser.element('#phone-qr svg')}/screenshot"))
    codes = zxingcpp.read_barcodes(Image.open(io.BytesIO(png)).convert("L"))
    pending = phone.pending()
    if len(pending) != 1:
        fail(f"the phone sees {len(pending)} requests")
    if not codes or not codes[0].text.startswith(f"touchstone://sign-in?request={pending[0]['requestId']}&secret="):
        fail(f"the page's QR code does not read as the request's sign-in code: {[c.text for c in codes]}")
    status, body = phone.approve(pending[0]["requestId"], pending[0]["payload"], int(number))
    if status != 200:
        fail(f"the phone's approval: {status} {body}")
    wait_for("the signed-in view after the phone's approval",
             lambda: browser.text("who") == address and browser.text("methods") == "phone_approval")
    if browser.text("status") != "Signed in with your phone.":
        fail(f"unexpected status after the phone sign-in: {browser.text('status')!r}")
    print("browser test: signed in with the phone (the number picked on a phone, the QR code read by zxing-cpp)")


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
    signer_key, signer = metadata_service(work)
    server = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--database", f"sqlite:{work}/touchstone.sqlite",
         "--rp-id", "localhost", "--origin", origin],
        stdout=server_log, stderr=subprocess.STDOUT,
        env={**os.environ, "TOUCHSTONE_MDS_FILE": os.path.join(work, "mds.jwt"),
             "TOUCHSTONE_MDS_ROOTS": os.path.join(work, "mds-root.pem"),
             "TOUCHSTONE_WEBHOOKS_ALLOW_PRIVATE": "loopback"},
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
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,1000"]},
        }}}
        session_id = http("POST", f"{driver_url}/session", capabilities, timeout=60)["value"]["sessionId"]
        browser = Browser(driver_url, session_id)
        print(f"browser test: {subprocess.run([chromium, '--version'], capture_output=True, text=True).stdout.strip()}")

        # The WebDriver WebAuthn extension: a platform authenticator that verifies the user.
        authenticator = browser.call("POST", "/webauthn/authenticator", {
            "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
            "isUserVerified": True, "automaticPresenceSimulation": True,
        })

        # The first URL a new user opens is the address serve listens on (an IP address, where passkeys cannot work):
        # the page sends the browser to localhost on the same port, and nothing on it shows an error.
        browser.call("POST", "/url", {"url": f"http://127.0.0.1:{port}/"})
        wait_for("the redirect to localhost", lambda: browser.call("GET", "/url") == origin + "/")
        wait_for("the page", lambda: browser.visible("signed-out"))
        time.sleep(1)  # the page starts passkey autofill on load; on an IP address that failed in red at once
        status = browser.script("const s = document.getElementById('status'); return [s.className, s.textContent]")
        if status[0] == "error" and "domain" in status[1].lower():
            fail(f"the page opened on 127.0.0.1 shows the relying-party error: {status[1]}")

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

        authenticator_metadata(browser, origin, admin_key, email, signer_key, signer, work)
        os.makedirs(os.path.dirname(screenshot_path), exist_ok=True)
        with open(screenshot_path, "wb") as file:
            file.write(base64.b64decode(browser.call("GET", "/screenshot")))
        print(f"browser test: screenshot of the signed-in page: {screenshot_path}")
        from browser_accounts import data_and_deletion, passkey_only_account, sessions_flow
        from browser_admin import admin_console
        from browser_email import email_flows
        sessions_flow(browser, origin, email)
        signals(browser, origin, admin_key, email, authenticator)
        email_flows(browser, origin, work, authenticator)
        phone_flow(browser, origin)
        admin_console(browser, origin, admin_key, email, os.path.join(os.path.dirname(screenshot_path), "admin-dashboard.png"))
        passkey_only_account(browser, origin)
        data_and_deletion(browser, origin, email)
        print("browser test: sign-up, passkey registration, sign-out, passkey sign-in, a passkey approval, your sessions, the email screens, the phone sign-in, the admin console, an account with a passkey only, the data export and the deletion: ok")
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
