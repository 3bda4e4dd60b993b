#!/usr/bin/env python3
"""The OpenID provider end to end: the real binary on loopback, a real OpenID client library (Authlib, from PyPI) as
the relying party, and headless Chromium for the provider's sign-in and consent pages.

Clients are registered with `touchstone clients create`; a small HTTP server of this script plays the relying
party's web server (its redirect URI, its post-logout page, its back-channel logout endpoint). Checked: discovery;
the whole flow for a confidential third-party client (sign-in page by accessible names, consent, code with state and
iss, token exchange with client_secret_basic and PKCE, the ID token verified by Authlib against the JWKS, UserInfo)
and for a public first-party client (PKCE alone, no consent); PKCE failures; code replay; refresh rotation and reuse
(which ends the session and delivers a back-channel logout token, verified); prompt=none; max_age; consent Deny; a
passkey sign-in on the provider's page with acr_values=phr (WebDriver's virtual authenticator); "Sign in with your
phone" on the provider's page, approved by the Python phone of scripts/phone.py; RP-initiated logout
back to a registered URI with its back-channel logout; a new user through prompt=create with a passkey alone.

Usage: scripts/oidc_e2e.py [path/to/touchstone] [screenshot of the sign-in page, default artifacts/oidc-sign-in.png]
"""
import http.server as httpserver
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import warnings

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.integrations.base_client.errors import OAuthError
warnings.simplefilter("ignore")  # authlib.jose's deprecation notice (its successor is a separate package)
from authlib.jose import JsonWebKey, jwt  # noqa: E402
from authlib.oidc.core import CodeIDToken

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import Browser, fail, free_port, http, wait_for  # noqa: E402

PASSWORD = "correct horse battery"


class RelyingParty(httpserver.BaseHTTPRequestHandler):
    """The relying party's web server: /cb and /bye answer 200; /backchannel records logout tokens."""
    backchannel = queue.Queue()

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"relying party")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        RelyingParty.backchannel.put((self.path, self.headers.get("Content-Type"), body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def expect(condition, message):
    if not condition:
        fail(message)


def create_client(binary, database, *args):
    output = subprocess.run([binary, "clients", "create", "--database", database, *args], capture_output=True, text=True, check=True)
    return json.loads(output.stdout)


def accessible_name(browser, css):
    return browser.call("GET", f"/element/{browser.element(css)}/computedlabel")


def query_of(url):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def landed(browser, prefix):
    return wait_for(f"the browser at {prefix}", lambda: (lambda url: url if url.startswith(prefix) else None)(browser.call("GET", "/url")))


def sign_in_on_page(browser, email):
    wait_for("the sign-in page", lambda: browser.script("return document.title").startswith("Sign in to"))
    # What a screen reader announces, as Chromium computes it.
    names = {css: accessible_name(browser, css) for css in ["#email", "#password", "#password-form button", "#passkey-sign-in"]}
    expect(names == {"#email": "Email", "#password": "Password", "#password-form button": "Sign in",
                     "#passkey-sign-in": "Sign in with a passkey"}, f"accessible names: {names}")
    browser.clear("#email")
    browser.type("#email", email)
    browser.type("#password", PASSWORD)
    browser.click("#password-form button")


def click_button(browser, label):
    buttons = browser.call("POST", "/elements", {"using": "css selector", "value": "button"})
    for button in buttons:
        element = button["element-6066-11e4-a52e-4f735466cecf"]
        if browser.call("GET", f"/element/{element}/computedlabel") == label:
            browser.call("POST", f"/element/{element}/click", {})
            return
    fail(f"no button named {label!r} on {browser.call('GET', '/url')}")


def verify_id_token(id_token, jwks, issuer, client_id, nonce):
    claims = jwt.decode(id_token, jwks, claims_cls=CodeIDToken,
                        claims_options={"iss": {"essential": True, "values": [issuer]}},
                        claims_params={"nonce": nonce, "client_id": client_id})
    claims.validate(leeway=5)
    return claims


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/touchstone"
    screenshot_path = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "artifacts/oidc-sign-in.png")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        fail("Chromium and chromedriver are required (Debian: apt-get install chromium chromium-driver)")
    work = tempfile.mkdtemp(prefix="touchstone-oidc-")
    port, driver_port, rp_port = free_port(), free_port(), free_port()
    issuer = f"http://localhost:{port}"
    rp = f"http://127.0.0.1:{rp_port}"
    database = f"sqlite:{work}/touchstone.sqlite"
    subprocess.run([binary, "migrate", "--database", database], check=True, capture_output=True)
    web = create_client(binary, database, "--name", "Example Web App", "--redirect-uri", f"{rp}/cb",
                        "--post-logout-redirect-uri", f"{rp}/bye", "--backchannel-logout-uri", f"{rp}/backchannel")
    spa = create_client(binary, database, "--name", "Example SPA", "--redirect-uri", f"{rp}/spa", "--public", "--first-party")
    expect(web.get("clientSecret", "").startswith("tsc_") and "clientSecret" not in spa, f"clients: {web} {spa}")

    rp_server = httpserver.ThreadingHTTPServer(("127.0.0.1", rp_port), RelyingParty)
    threading.Thread(target=rp_server.serve_forever, daemon=True).start()
    server_log = open(os.path.join(work, "server.log"), "w")
    server = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--database", database, "--rp-id", "localhost", "--origin", issuer],
        stdout=server_log, stderr=subprocess.STDOUT,
        env={**os.environ, "TOUCHSTONE_ISSUER": issuer, "TOUCHSTONE_BCRYPT_COST": "4"},
    )
    driver = subprocess.Popen([chromedriver, f"--port={driver_port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    driver_url = f"http://127.0.0.1:{driver_port}"
    session_id = None
    try:
        wait_for("the server", lambda: http("GET", f"{issuer}/health").get("status") == "ok")
        wait_for("chromedriver", lambda: http("GET", f"{driver_url}/status")["value"]["ready"])
        capabilities = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": chromium, "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1000,800"]}}}}
        session_id = http("POST", f"{driver_url}/session", capabilities, timeout=60)["value"]["sessionId"]
        browser = Browser(driver_url, session_id)

        # Discovery, and the keys Authlib verifies with.
        metadata = requests.get(f"{issuer}/.well-known/openid-configuration").json()
        expect(metadata == requests.get(f"{issuer}/.well-known/oauth-authorization-server").json(), "the two discovery documents differ")
        expect(metadata["issuer"] == issuer and metadata["code_challenge_methods_supported"] == ["S256"], f"metadata: {metadata}")
        jwks = JsonWebKey.import_key_set(requests.get(metadata["jwks_uri"]).json())

        email = "oidc@example.com"
        http("POST", f"{issuer}/v1/users", {"email": email, "password": PASSWORD, "displayName": "Olive Idc"})

        # 1. A confidential third-party client: sign-in page, consent, code, tokens.
        client = OAuth2Session(web["clientId"], web["clientSecret"], scope="openid email profile offline_access",
                               redirect_uri=f"{rp}/cb", code_challenge_method="S256", token_endpoint_auth_method="client_secret_basic")
        verifier = os.urandom(32).hex()
        nonce = os.urandom(8).hex()
        url, state = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
        browser.call("POST", "/url", {"url": url})
        wait_for("the sign-in page", lambda: browser.script("return document.title").startswith("Sign in to"))
        os.makedirs(os.path.dirname(screenshot_path), exist_ok=True)
        with open(screenshot_path, "wb") as file:
            file.write(__import__("base64").b64decode(browser.call("GET", "/screenshot")))
        sign_in_on_page(browser, email)
        wait_for("the consent page", lambda: "Allow" in browser.script("return document.body.innerText"))
        expect("Example Web App" in browser.script("return document.body.innerText"), "the consent page does not name the client")
        click_button(browser, "Allow")
        callback = landed(browser, f"{rp}/cb")
        expect(query_of(callback).get("iss") == issuer, f"RFC 9207 iss missing: {callback}")
        token = client.fetch_token(metadata["token_endpoint"], authorization_response=callback, code_verifier=verifier)
        claims = verify_id_token(token["id_token"], jwks, issuer, web["clientId"], nonce)
        expect(claims["email"] == email and claims["name"] == "Olive Idc" and claims["amr"] == ["pwd"] and claims.get("sid"),
               f"ID token claims: {dict(claims)}")
        userinfo = client.get(metadata["userinfo_endpoint"]).json()
        expect(userinfo["sub"] == claims["sub"] and userinfo["email"] == email, f"userinfo: {userinfo}")
        print("oidc e2e: confidential client: sign-in page, consent, code, tokens, ID token (Authlib), UserInfo")

        # The code again: invalid_grant, and the tokens issued from it are revoked.
        code = query_of(callback)["code"]
        replay = requests.post(metadata["token_endpoint"], auth=(web["clientId"], web["clientSecret"]), data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": f"{rp}/cb", "code_verifier": verifier})
        expect(replay.status_code == 400 and replay.json()["error"] == "invalid_grant", f"replay: {replay.text}")
        expect(requests.get(metadata["userinfo_endpoint"], headers={"Authorization": f"Bearer {token['access_token']}"}).status_code == 401,
               "the access token of a replayed code still works")
        print("oidc e2e: code replay refused and its tokens revoked")

        # A PKCE failure: a wrong verifier.
        url, _ = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
        browser.call("POST", "/url", {"url": url})
        callback = landed(browser, f"{rp}/cb")  # signed in and allowed: straight back
        try:
            client.fetch_token(metadata["token_endpoint"], authorization_response=callback, code_verifier="w" * 50)
            fail("a wrong code_verifier was accepted")
        except OAuthError as error:
            expect(error.error == "invalid_grant", f"wrong verifier: {error}")
        # No PKCE at all: the client gets invalid_request back at its redirect URI.
        bare = f"{metadata['authorization_endpoint']}?response_type=code&client_id={web['clientId']}&redirect_uri={urllib.parse.quote(rp + '/cb')}&scope=openid&state=s"
        browser.call("POST", "/url", {"url": bare})
        expect(query_of(landed(browser, f"{rp}/cb")).get("error") == "invalid_request", "a request without PKCE was not refused")
        print("oidc e2e: PKCE failures refused")

        # 2. Refresh rotation, then reuse: the grant dies, the session ends, the back-channel logout arrives.
        url, _ = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
        browser.call("POST", "/url", {"url": url})
        token = client.fetch_token(metadata["token_endpoint"], authorization_response=landed(browser, f"{rp}/cb"), code_verifier=verifier)
        first_refresh = token["refresh_token"]
        rotated = client.refresh_token(metadata["token_endpoint"], refresh_token=first_refresh)
        expect(rotated["refresh_token"] != first_refresh, "the refresh token was not rotated")
        reuse = requests.post(metadata["token_endpoint"], auth=(web["clientId"], web["clientSecret"]),
                              data={"grant_type": "refresh_token", "refresh_token": first_refresh})
        expect(reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant" and reuse.headers["Cache-Control"] == "no-store",
               f"reuse: {reuse.status_code} {reuse.text}")
        path, content_type, body = RelyingParty.backchannel.get(timeout=15)
        expect(path == "/backchannel" and content_type == "application/x-www-form-urlencoded", f"back-channel: {path} {content_type}")
        logout_token = urllib.parse.parse_qs(body)["logout_token"][0]
        logout = jwt.decode(logout_token, jwks)
        logout.validate(leeway=5)
        header = json.loads(__import__("base64").urlsafe_b64decode(logout_token.split(".")[0] + "=="))
        expect(header["typ"] == "logout+jwt" and logout["iss"] == issuer and logout["aud"] == web["clientId"]
               and "http://schemas.openid.net/event/backchannel-logout" in logout["events"] and "nonce" not in logout
               and logout["sid"] == claims["sid"], f"logout token: {header} {dict(logout)}")
        dead = requests.post(metadata["token_endpoint"], auth=(web["clientId"], web["clientSecret"]),
                             data={"grant_type": "refresh_token", "refresh_token": rotated["refresh_token"]})
        expect(dead.json().get("error") == "invalid_grant", "the rotated refresh token outlived the reuse")
        print("oidc e2e: refresh rotation; reuse revoked the grant, ended the session, back-channel logout verified")

        # 3. prompt=none: the session ended, so login_required; max_age after a new sign-in; consent Deny.
        url, _ = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce, prompt="none")
        browser.call("POST", "/url", {"url": url})
        expect(query_of(landed(browser, f"{rp}/cb")).get("error") == "login_required", "prompt=none without a session")
        url, _ = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
        browser.call("POST", "/url", {"url": url})
        sign_in_on_page(browser, email)
        landed(browser, f"{rp}/cb")  # consent remembered
        url, _ = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce, prompt="none")
        browser.call("POST", "/url", {"url": url})
        expect("code" in query_of(landed(browser, f"{rp}/cb")), "prompt=none with a session and consent")
        time.sleep(1.1)
        url, _ = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce, max_age="0")
        browser.call("POST", "/url", {"url": url})
        sign_in_on_page(browser, email)  # max_age=0: the page again
        landed(browser, f"{rp}/cb")
        url, _ = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce,
                                                 scope="openid email profile offline_access", prompt="consent")
        browser.call("POST", "/url", {"url": url})
        wait_for("the consent page", lambda: "Deny" in browser.script("return document.body.innerText"))
        click_button(browser, "Deny")
        expect(query_of(landed(browser, f"{rp}/cb")).get("error") == "access_denied", "Deny did not answer access_denied")
        print("oidc e2e: prompt=none, max_age, consent Deny")

        # 4. A public first-party client: no consent page, PKCE alone, no secret.
        spa_client = OAuth2Session(spa["clientId"], scope="openid", redirect_uri=f"{rp}/spa", code_challenge_method="S256",
                                   token_endpoint_auth_method="none")
        url, _ = spa_client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
        browser.call("POST", "/url", {"url": url})
        spa_token = spa_client.fetch_token(metadata["token_endpoint"], authorization_response=landed(browser, f"{rp}/spa"),
                                           code_verifier=verifier)
        verify_id_token(spa_token["id_token"], jwks, issuer, spa["clientId"], nonce)
        print("oidc e2e: public first-party client with PKCE alone")

        # 5. RP-initiated logout back to the registered URI; the session's other client hears of it.
        while not RelyingParty.backchannel.empty():
            RelyingParty.backchannel.get()
        url, _ = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
        browser.call("POST", "/url", {"url": url})
        token = client.fetch_token(metadata["token_endpoint"], authorization_response=landed(browser, f"{rp}/cb"), code_verifier=verifier)
        end = metadata["end_session_endpoint"] + "?" + urllib.parse.urlencode({
            "id_token_hint": token["id_token"], "post_logout_redirect_uri": f"{rp}/bye", "state": "bye-1"})
        browser.call("POST", "/url", {"url": end})
        expect(query_of(landed(browser, f"{rp}/bye")).get("state") == "bye-1", "logout did not return with state")
        RelyingParty.backchannel.get(timeout=15)
        expect(requests.post(metadata["token_endpoint"], auth=(web["clientId"], web["clientSecret"]), data={
            "grant_type": "refresh_token", "refresh_token": token["refresh_token"]}).json().get("error") == "invalid_grant",
            "a refresh token outlived the logout")
        print("oidc e2e: RP-initiated logout with back-channel logout")

        # 6. A passkey on the provider's page (acr_values=phr): registered on the demo page, used at the provider.
        authenticator = browser.call("POST", "/webauthn/authenticator", {
            "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
            "isUserVerified": True, "automaticPresenceSimulation": True})
        browser.call("POST", "/url", {"url": issuer + "/"})
        wait_for("the demo page", lambda: browser.visible("signed-out"))
        browser.type("#sign-in-email", email)
        browser.type("#sign-in-password", PASSWORD)
        browser.click("#sign-in-form button")
        wait_for("the signed-in view", lambda: browser.text("who") == email)
        browser.click("#add-passkey")
        wait_for("the passkey in the list", lambda: "Passkey on this device" in browser.text("passkeys"))
        url, _ = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce, acr_values="phr")
        browser.call("POST", "/url", {"url": url})
        wait_for("the passkey-only sign-in page", lambda: browser.script("return !document.getElementById('password')"))
        click_button(browser, "Sign in with a passkey")
        token = client.fetch_token(metadata["token_endpoint"], authorization_response=landed(browser, f"{rp}/cb"), code_verifier=verifier)
        claims = verify_id_token(token["id_token"], jwks, issuer, web["clientId"], nonce)
        expect(claims.get("acr") in ("phr", "phrh") and "hwk" in claims["amr"], f"passkey ID token: {dict(claims)}")
        browser.call("DELETE", f"/webauthn/authenticator/{authenticator}")
        print(f"oidc e2e: passkey sign-in on the provider's page (acr {claims['acr']})")

        # 7. The user's own page lists the apps they allowed; withdrawing one ends its tokens.
        browser.call("POST", "/url", {"url": issuer + "/"})
        wait_for("the demo page", lambda: browser.visible("signed-out"))
        browser.type("#sign-in-email", email)
        browser.type("#sign-in-password", PASSWORD)
        browser.click("#sign-in-form button")
        wait_for("the allowed app", lambda: "Example Web App" in browser.text("grants"))
        click_button(browser, "Withdraw")
        wait_for("the withdrawal", lambda: "No apps yet" in browser.text("grants"))
        withdrawn = requests.post(metadata["token_endpoint"], auth=(web["clientId"], web["clientSecret"]), data={
            "grant_type": "refresh_token", "refresh_token": token["refresh_token"]})
        expect(withdrawn.json().get("error") == "invalid_grant", "a refresh token outlived the withdrawn consent")
        print("oidc e2e: the web page lists the allowed app; withdrawing it revoked its tokens")

        # 8. "Sign in with your phone" on the provider's page (prompt=login): the request names the client; a phone
        # written in Python (scripts/phone.py) picks the number the page shows and signs; the browser lands with a code.
        from phone import Phone
        phone = Phone(issuer, email, PASSWORD, "oidc-e2e-phone")
        spa_client = OAuth2Session(spa["clientId"], redirect_uri=f"{rp}/spa", scope="openid email", code_challenge_method="S256")
        spa_verifier = "w" * 48
        url, _ = spa_client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=spa_verifier, nonce="phone-n",
                                                     prompt="login")
        browser.call("POST", "/url", {"url": url})
        wait_for("the sign-in page", lambda: browser.script("return document.title").startswith("Sign in to"))
        browser.clear("#email")
        browser.type("#email", email)
        click_button(browser, "Sign in with your phone")
        number = wait_for("the number", lambda: browser.script("return document.getElementById('phone-number').textContent").strip())
        request = wait_for("the request on the phone", lambda: phone.pending())[0]
        expect(request["client"] == "Example SPA", f"the phone shows {request['client']!r}")
        status, body = phone.approve(request["requestId"], request["payload"], int(number))
        expect(status == 200, f"the phone's approval: {status} {body}")
        token = spa_client.fetch_token(metadata["token_endpoint"], authorization_response=landed(browser, f"{rp}/spa"),
                                       code_verifier=spa_verifier)
        claims = verify_id_token(token["id_token"], jwks, issuer, spa["clientId"], "phone-n")
        expect(claims["amr"] == ["hwk", "user"], f"phone ID token: {dict(claims)}")
        print("oidc e2e: 'Sign in with your phone' on the provider's page: the phone picked the number, the client got an ID token (amr hwk user)")

        # 9. A new user through prompt=create (Initiating User Registration via OpenID Connect 1.0), with a passkey and no
        # password: the page opens at account creation, the page's script makes the account, the flow continues.
        expect("create" in metadata.get("prompt_values_supported", []), "discovery does not list prompt=create")
        authenticator = browser.call("POST", "/webauthn/authenticator", {
            "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
            "isUserVerified": True, "automaticPresenceSimulation": True})
        newcomer = "newcomer@example.com"
        url, _ = spa_client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=spa_verifier, nonce="create-n",
                                                     prompt="create")
        browser.call("POST", "/url", {"url": url})
        wait_for("the account creation part, open", lambda: browser.script("return document.getElementById('create-account').open") is True)
        expect(accessible_name(browser, "#passkey-sign-up") == "Create account with a passkey",
               f"the passkey sign-up button: {accessible_name(browser, '#passkey-sign-up')!r}")
        expect(accessible_name(browser, "#sign-up-email") == "Email", "the sign-up email field has no accessible name")
        browser.type("#sign-up-email", newcomer)
        click_button(browser, "Create account with a passkey")
        token = spa_client.fetch_token(metadata["token_endpoint"], authorization_response=landed(browser, f"{rp}/spa"),
                                       code_verifier=spa_verifier)
        claims = verify_id_token(token["id_token"], jwks, issuer, spa["clientId"], "create-n")
        expect(claims["email"] == newcomer and claims["amr"] == ["hwk", "user"], f"the new user's ID token: {dict(claims)}")
        refused = requests.post(f"{issuer}/v1/sessions", json={"email": newcomer, "password": PASSWORD})
        expect(refused.status_code == 401, "the passkey-only account signed in with a password")
        browser.call("DELETE", f"/webauthn/authenticator/{authenticator}")
        print("oidc e2e: prompt=create: a new account with a passkey alone, and an ID token for it (amr hwk user)")

        log = open(os.path.join(work, "server.log")).read()
        for secret in [web["clientSecret"], first_refresh, PASSWORD, code]:
            expect(secret not in log, "a secret reached the server's log")
        print("oidc e2e: ok")
    except RuntimeError as error:
        fail(str(error))
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
        rp_server.shutdown()


if __name__ == "__main__":
    main()
