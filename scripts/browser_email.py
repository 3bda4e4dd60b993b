"""The browser test's email steps, run by scripts/browser_test.py with its browser: the page's email screens by their
labels (the address verified with the mailed code, "Email me a code", "Forgot password?", a reset link opened in the
browser), the mails read from the server's mail folder."""
import email as email_parser
import email.policy as email_policy
import os
import re

from browser_test import fail, http, wait_for


def mails(work, address, kind):
    """The `.eml` files the server wrote for `address` (no SMTP configured: the default mail folder beside the
    database), oldest first, parsed with Python's email package."""
    folder = os.path.join(work, "touchstone-mail")
    found = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if f"-{kind}-" not in name or not name.endswith(".eml"):
            continue
        with open(os.path.join(folder, name), "rb") as handle:
            message = email_parser.message_from_bytes(handle.read(), policy=email_policy.default)
        if message["To"].addresses[0].addr_spec == address:
            found.append(message)
    return found


def mailed_code(work, address, kind, count=1):
    """The code of the `count`-th mail of `kind` to `address`, once it is written."""
    message = wait_for(f"mail #{count} ({kind}) to {address}",
                       lambda: (lambda found: found[count - 1] if len(found) >= count else None)(mails(work, address, kind)))
    text = message.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")
    match = re.search(r"^(?:Your code: )?([0-9]{6})$", text, re.MULTILINE)
    if not match:
        fail(f"no code in the {kind} mail")
    return match.group(1), message


def email_flows(browser, origin, work, authenticator):
    """The email screens of the web page, by their labels: verifying the address with the mailed code, "Email me a
    code", "Forgot password?", and a reset link opened in the browser (which acts only on the button)."""
    address = "mail-flows@example.com"
    # No passkey in the virtual authenticator: a page load would otherwise sign in with it (autofill).
    browser.call("DELETE", f"/webauthn/authenticator/{authenticator}/credentials")
    browser.call("POST", "/url", {"url": origin + "/"})
    wait_for("the page", lambda: browser.visible("signed-out"))
    browser.type("#sign-up-email", address)
    browser.type("#sign-up-password", "correct horse battery")
    browser.click("#sign-up-form button")
    wait_for("the verification card", lambda: browser.visible("verify-card") and browser.text("verify-address") == address)
    code, _ = mailed_code(work, address, "verify_email")
    browser.type("#verify-code", code)
    browser.click("#verify-form button[type=submit]")
    wait_for("the verified address", lambda: not browser.visible("verify-card") and "verified" in browser.text("status"))
    browser.click("#sign-out")
    wait_for("the signed-out view", lambda: browser.visible("signed-out"))
    print("browser test: the address verified with the mailed code")

    # Email me a code.
    browser.type("#email-code-email", address)
    browser.click("#email-code-form button[type=submit]")
    wait_for("the code field", lambda: browser.visible("email-code-verify-form"))
    code, _ = mailed_code(work, address, "sign_in_code")
    browser.type("#email-code", code)
    browser.click("#email-code-verify-form button")
    wait_for("the email-code session", lambda: browser.text("who") == address and browser.text("methods") == "email_code")
    browser.click("#sign-out")
    wait_for("the signed-out view", lambda: browser.visible("signed-out"))
    print("browser test: signed in with a mailed code")

    # Forgot password? with the code, arriving by a link to /#forgot-password.
    browser.call("POST", "/url", {"url": origin + "/#forgot-password"})
    wait_for("the forgot-password prompt", lambda: "Forgot password?" in browser.text("status")
             and browser.script("return document.activeElement.id") == "email-code-email")
    browser.clear("#email-code-email")
    browser.type("#email-code-email", address)
    browser.click("#forgot-password")
    wait_for("the reset form", lambda: browser.visible("reset-form"))
    code, _ = mailed_code(work, address, "password_reset")
    browser.type("#reset-code", code)
    browser.type("#reset-password", "a new passphrase 1")
    browser.click("#reset-form button")
    wait_for("the session after the reset", lambda: browser.text("who") == address and "password is set" in browser.text("status"))
    # Recovery codes, made in this fresh password session, then one used to sign in.
    browser.click("#make-recovery-codes")
    wait_for("ten recovery codes", lambda: len(browser.script("return [...document.querySelectorAll('#recovery-codes li')].map(e => e.textContent)")) == 10)
    codes = browser.script("return [...document.querySelectorAll('#recovery-codes li')].map(e => e.textContent)")
    browser.click("#sign-out")
    wait_for("the signed-out view", lambda: browser.visible("signed-out"))
    if browser.visible("recovery-codes"):
        fail("the recovery codes stay on the page after signing out")
    browser.clear("#email-code-email")
    browser.type("#email-code-email", address)
    browser.type("#recovery-code", codes[0].upper())
    browser.click("#recovery-sign-in-form button")
    wait_for("the recovery session", lambda: browser.text("who") == address and browser.text("methods") == "recovery_code")
    print("browser test: recovery codes made on the page, one used to sign in")
    browser.click("#sign-out")
    wait_for("the signed-out view", lambda: browser.visible("signed-out"))
    print("browser test: a new password with \"Forgot password?\"")

    # A reset link: opening it changes nothing until the button.
    http("POST", f"{origin}/v1/password-resets", {"email": address})
    _, message = mailed_code(work, address, "password_reset", count=2)
    link = re.search(r'href="([^"]+#reset-password=[A-Za-z0-9_-]{43})"', message.get_body(preferencelist=("html",)).get_content())
    if not link:
        fail("no reset link in the mail")
    url = link.group(1).replace("&amp;", "&")
    if not url.startswith(origin + "/#reset-password="):
        fail(f"the link does not open this page: {url}")
    browser.call("POST", "/url", {"url": url})
    wait_for("the reset page", lambda: browser.visible("reset-link-card"))
    if browser.call("GET", "/url") != origin + "/":
        fail("the token stays in the address bar")
    status = http("POST", f"{origin}/v1/sessions", {"email": address, "password": "a new passphrase 1"})
    if "session" not in status:
        fail("opening the link changed the password")
    browser.type("#reset-link-password", "a newer passphrase 2")
    browser.click("#reset-link-form button")
    wait_for("the reset by link", lambda: "password is set" in browser.text("status"))
    http("POST", f"{origin}/v1/sessions", {"email": address, "password": "a newer passphrase 2"})
    print("browser test: a reset link opened the page, and only the button set the password")
