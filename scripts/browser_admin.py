"""The browser test's admin console steps, run by scripts/browser_test.py with its browser: after a scripted load
(password and device-key sign-ins, some failing), it signs in with an admin key, checks the dashboard charts the load,
finds the user, revokes their device and sees the audit event appear, changes the runtime policy, adds a webhook
endpoint and sees a test event delivered, exports the audit trail, and saves a screenshot of the dashboard."""
import base64
import http.server as http_server
import json
import threading
import urllib.parse

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from browser_test import fail, http, wait_for


def enroll_device(origin, email, password):
    """Enrols a P-256 device key for the user the way an app does; returns (registration id, private key)."""
    token = http("POST", f"{origin}/v1/sessions", {"email": email, "password": password})["session"]["token"]
    key = ec.generate_private_key(ec.SECP256R1())
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    started = http("POST", f"{origin}/v1/biometrics/registrations/start", {
        "publicKey": base64.b64encode(spki).decode(), "algorithm": "ES256", "deviceId": "browser-test-phone",
        "deviceName": "Test phone"}, token=token)
    signature = key.sign(started["challenge"].encode(), ec.ECDSA(hashes.SHA256()))
    http("POST", f"{origin}/v1/biometrics/registrations/finish",
         {"registrationId": started["registrationId"], "signature": base64.b64encode(signature).decode()}, token=token)
    return started["registrationId"], key


def device_sign_in(origin, registration_id, key, valid=True):
    challenge = http("POST", f"{origin}/v1/biometrics/authentications/start", {"registrationId": registration_id})["challenge"]
    signer = key if valid else ec.generate_private_key(ec.SECP256R1())
    signature = signer.sign(challenge.encode(), ec.ECDSA(hashes.SHA256()))
    try:
        http("POST", f"{origin}/v1/biometrics/authentications/finish", {
            "registrationId": registration_id, "challenge": challenge, "signature": base64.b64encode(signature).decode()})
        return True
    except RuntimeError:
        return False


def admin_console(browser, origin, admin_key, email, screenshot_path):
    password = "correct horse battery"
    # A scripted load the dashboard must show: password and device-key sign-ins, some of each failing.
    registration_id, key = enroll_device(origin, email, password)
    for _ in range(3):
        if not device_sign_in(origin, registration_id, key):
            fail("a device-key sign-in failed")
    if device_sign_in(origin, registration_id, key, valid=False):
        fail("a wrong device-key signature was accepted")
    http("POST", f"{origin}/v1/users", {"email": "load@example.com", "password": password})
    for wrong in ("not it", "nor this"):
        try:
            http("POST", f"{origin}/v1/sessions", {"email": "load@example.com", "password": wrong})
            fail("a wrong password was accepted")
        except RuntimeError:
            pass
    stats = http("GET", f"{origin}/v1/admin/stats?window=hour", token=admin_key)
    expected_total = sum(outcomes.get("success", 0) + outcomes.get("failure", 0)
                         for bucket in stats["buckets"] for outcomes in bucket["signIns"].values())
    if expected_total < 8:
        fail(f"the scripted load is not in the stats: {stats}")

    browser.call("POST", "/url", {"url": origin + "/admin/"})
    wait_for("the admin sign-in form", lambda: browser.visible("signed-out"))
    browser.type("#admin-key", admin_key)
    browser.click("#sign-in-form button")
    wait_for("the dashboard", lambda: browser.visible("console") and browser.visible("dashboard"))
    wait_for("the chart of the load", lambda: browser.script(
        "return document.getElementById('chart').dataset.total") == str(expected_total))
    bars = browser.script("return document.querySelectorAll('#chart-svg rect.failure').length")
    if bars != len(stats["buckets"]):
        fail(f"expected a bar per bucket, got {bars}")
    if "invalid_signature" not in browser.text("failures-by-code") or "invalid_credentials" not in browser.text("failures-by-code"):
        fail(f"failures by code: {browser.text('failures-by-code')!r}")
    print(f"admin console: signed in; the dashboard charts {expected_total} sign-ins of the last hour")

    browser.click(".tab[data-tab=users]")
    browser.type("#user-search", email)
    browser.click("#user-search-form button")
    wait_for("the user in the results", lambda: browser.script("return document.querySelectorAll('.open-user').length") == 1)
    browser.click(".open-user")
    wait_for("the user's device", lambda: browser.text("user-email") == email and "Test phone" in browser.text("user-devices"))
    if "has a password" not in browser.text("user-meta"):
        fail(f"the console does not say the account has a password: {browser.text('user-meta')!r}")
    browser.click(".revoke-device")
    browser.accept_alert()
    wait_for("the revocation", lambda: browser.text("status") == "Device revoked." and "revoked" in browser.text("user-devices"))
    wait_for("the audit event", lambda: "registration.revoked" in browser.text("user-events"))
    user_id = http("GET", f"{origin}/v1/admin/users?email={urllib.parse.quote(email)}", token=admin_key)["users"][0]["id"]
    registrations = http("GET", f"{origin}/v1/admin/users/{user_id}", token=admin_key)["registrations"]
    if [r["status"] for r in registrations if r["id"] == registration_id] != ["revoked"]:
        fail(f"the server does not have the device revoked: {registrations}")
    print("admin console: found the user, revoked the device, and the audit trail shows it")

    browser.click(".tab[data-tab=policy]")
    wait_for("the policy form", lambda: browser.script("return document.getElementById('policy-lockout').value") == "5")
    browser.clear("#policy-lockout")
    browser.type("#policy-lockout", "7")
    browser.click("#policy-form button[type=submit]")
    browser.accept_alert()
    wait_for("the saved policy", lambda: browser.text("status") == "Policy saved.")
    if http("GET", f"{origin}/v1/admin/policy", token=admin_key)["lockoutThreshold"] != 7:
        fail("the policy change did not reach the server")
    print("admin console: changed the lockout threshold to 7")

    # The OpenID provider's clients: register one from the form (labels as a screen reader announces them), see its
    # secret once, rotate it, delete it.
    browser.click(".tab[data-tab=clients]")
    wait_for("the clients page", lambda: browser.visible("clients"))
    labels = {css: browser.call("GET", f"/element/{browser.element(css)}/computedlabel")
              for css in ["#client-name", "#client-redirects", "#client-public", "#client-first-party"]}
    if labels["#client-name"] != "Name" or not labels["#client-redirects"].startswith("Redirect URIs"):
        fail(f"the client form's accessible names: {labels}")
    browser.type("#client-name", "Console App")
    browser.type("#client-redirects", "https://console-app.example.com/cb")
    browser.click("#client-form button[type=submit]")
    wait_for("the new client and its secret", lambda: "Console App" in browser.text("client-list")
             and browser.text("client-secret-value").startswith("tsc_"))
    first_secret = browser.text("client-secret-value")
    registered = [c for c in http("GET", f"{origin}/v1/admin/clients", token=admin_key)["clients"] if c["name"] == "Console App"]
    if len(registered) != 1 or registered[0]["redirectUris"] != ["https://console-app.example.com/cb"]:
        fail(f"the server does not have the client: {registered}")
    client_id = registered[0]["clientId"]
    browser.script(f"[...document.querySelectorAll('[data-client=\"{client_id}\"] button')].find(b => b.textContent === 'Rotate secret').click(); return true")
    browser.accept_alert()
    wait_for("the rotated secret", lambda: browser.text("client-secret-value").startswith("tsc_")
             and browser.text("client-secret-value") != first_secret)
    browser.script(f"[...document.querySelectorAll('[data-client=\"{client_id}\"] button')].find(b => b.textContent === 'Delete').click(); return true")
    browser.accept_alert()
    wait_for("the deletion", lambda: "Console App" not in browser.text("client-list"))
    print("admin console: registered an OpenID client, saw its secret once, rotated it, deleted it")

    # Webhooks: add an endpoint for a receiver of this script's (its secret shown once), send a test event, see the
    # delivery in the history, disable the endpoint, delete it.
    received = []

    class Receiver(http_server.BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(self.headers.get("webhook-id"))
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    receiver = http_server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    browser.click(".tab[data-tab=webhooks]")
    wait_for("the webhooks page", lambda: browser.visible("webhooks") and browser.script(
        "return document.querySelectorAll('.webhook-type').length") >= 14)
    labels = {css: browser.call("GET", f"/element/{browser.element(css)}/computedlabel")
              for css in ["#webhook-url", "#webhook-description", ".webhook-type[value='device.revoked']"]}
    if labels != {"#webhook-url": "URL", "#webhook-description": "Description", ".webhook-type[value='device.revoked']": "device.revoked"}:
        fail(f"the webhook form's accessible names: {labels}")
    browser.type("#webhook-url", hook)
    browser.type("#webhook-description", "Console receiver")
    browser.click(".webhook-type[value='device.revoked']")
    browser.click("#webhook-form button[type=submit]")
    wait_for("the new endpoint and its secret", lambda: hook in browser.text("webhook-list")
             and browser.text("webhook-secret-value").startswith("whsec_"))
    endpoints = http("GET", f"{origin}/v1/admin/webhooks", token=admin_key)["endpoints"]
    if [(e["url"], e["events"]) for e in endpoints] != [(hook, ["device.revoked"])]:
        fail(f"the server does not have the endpoint: {endpoints}")
    endpoint_id = endpoints[0]["id"]
    click_in = lambda label: browser.script(  # noqa: E731
        f"[...document.querySelectorAll('[data-webhook=\"{endpoint_id}\"] button')].find(b => b.textContent === '{label}').click(); return true")
    click_in("Send test")
    wait_for("the test event at the receiver", lambda: received)
    click_in("Deliveries")
    wait_for("the delivery in the history", lambda: received[0] in browser.text("webhook-delivery-table")
             and "delivered" in browser.text("webhook-delivery-table"))
    click_in("Disable")
    wait_for("the disabled endpoint", lambda: "disabled" in browser.text("webhook-list"))
    if http("GET", f"{origin}/v1/admin/webhooks/{endpoint_id}", token=admin_key)["enabled"]:
        fail("the endpoint was not disabled")
    click_in("Delete")
    browser.accept_alert()
    wait_for("the deletion", lambda: hook not in browser.text("webhook-list"))
    receiver.shutdown()
    print("admin console: added a webhook endpoint, sent a test event it received, saw it delivered, disabled and deleted it")

    # The audit export: every event of the user as JSON Lines (the download's blob is captured as it is made).
    browser.click(".tab[data-tab=audit]")
    browser.type("#audit-user", user_id)
    browser.script("window.__exported = null; const make = URL.createObjectURL;"
                   " URL.createObjectURL = (blob) => { window.__exported = blob; return make(blob); }; return true")
    browser.click("#audit-export")
    wait_for("the export", lambda: browser.text("status").startswith("Exported "))
    exported = browser.call("POST", "/execute/async", {
        "script": "const done = arguments[arguments.length - 1]; window.__exported.text().then(done)", "args": []})
    lines = [json.loads(line) for line in exported.splitlines()]
    trail = http("GET", f"{origin}/v1/admin/events?userId={user_id}&limit=1000", token=admin_key)["events"]
    if [event["id"] for event in lines] != [event["id"] for event in trail] or not any(
            event["type"] == "registration.revoked" for event in lines):
        fail(f"the JSON Lines export differs from the user's trail: {len(lines)} lines, {len(trail)} events")
    print(f"admin console: exported the user's {len(lines)} audit events as JSON Lines")

    storage = browser.script("return JSON.stringify([localStorage.length, sessionStorage.length, document.cookie])")
    if storage != '[0,0,""]':
        fail(f"the console must keep the admin key in memory only: {storage}")
    browser.click(".tab[data-tab=dashboard]")
    wait_for("the dashboard again", lambda: browser.visible("dashboard") and browser.script(
        "return document.getElementById('chart').dataset.total") == str(expected_total))
    with open(screenshot_path, "wb") as file:
        file.write(base64.b64decode(browser.call("GET", "/screenshot")))
    print(f"admin console: screenshot of the dashboard: {screenshot_path}")
