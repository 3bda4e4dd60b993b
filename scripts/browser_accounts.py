"""The browser test's steps for the account as its owner's (issue #42), run by scripts/browser_test.py with its browser:
your sessions, an account made with a passkey and no password (its password set and removed again, a session ended,
its data downloaded, then deleted), and the main account's export and deletion."""
from browser_test import fail, http, wait_for


def sessions_flow(browser, origin, email):
    """Your sessions (issue #42): the list shows this browser and the account's other live sessions; one is signed out
    by its button (found by its accessible name), then all others at once."""
    other = http("POST", f"{origin}/v1/sessions", {"email": email, "password": "correct horse battery"})["session"]["token"]
    browser.click("#revoke-others")  # refreshes the list too
    wait_for("all other sessions signed out", lambda: browser.text("status").startswith("Signed out ") and "other session" in browser.text("status"))
    try:
        http("GET", f"{origin}/v1/session", token=other)
        fail("a session signed out from the list still works")
    except RuntimeError as error:
        if "-> 401" not in str(error):
            raise
    items = lambda: browser.script("return [...document.querySelectorAll('#sessions li')].map((li) => li.textContent)")
    wait_for("the list to hold this browser only", lambda: len(items()) == 1 and items()[0].startswith("This browser"))
    # One more session, listed after a refresh (adding a passkey refreshes the lists), signed out by its own button.
    third = http("POST", f"{origin}/v1/sessions", {"email": email, "password": "correct horse battery"})["session"]["token"]
    browser.script("return refreshLists()")
    wait_for("the new session in the list", lambda: len(browser.script("return [...document.querySelectorAll('#sessions li')]")) == 2)
    labels = browser.script("return [...document.querySelectorAll('#sessions li button')].map((b) => b.getAttribute('aria-label'))")
    if len(labels) != 1 or not labels[0].startswith("Sign out ") or "password" not in labels[0]:
        fail(f"the other session's button needs an accessible name that says which session: {labels}")
    browser.click("#sessions li button")
    wait_for("the session signed out by its button", lambda: browser.text("status") == "That session is signed out.")
    try:
        http("GET", f"{origin}/v1/session", token=third)
        fail("the session signed out by its button still works")
    except RuntimeError as error:
        if "-> 401" not in str(error):
            raise
    print("browser test: your sessions: all others signed out, then one by its button")


def data_and_deletion(browser, origin, email):
    """Download your data, then delete the account (issue #42), after a fresh password sign-in on the page;
    afterwards nothing of the account signs in. Runs last: the account is gone after it."""
    browser.call("POST", "/url", {"url": origin + "/"})
    wait_for("the page", lambda: browser.visible("signed-out") or browser.visible("signed-in"))
    if browser.visible("signed-in"):  # autofill may have signed in with a passkey on load
        browser.click("#sign-out")
        wait_for("the signed-out view", lambda: browser.visible("signed-out"))
    browser.type("#sign-in-email", email)
    browser.type("#sign-in-password", "correct horse battery")
    browser.click("#sign-in-form button")
    wait_for("a fresh password sign-in", lambda: browser.text("who") == email and browser.text("methods") == "password")
    browser.click("#download-data")
    wait_for("the data export", lambda: browser.text("status").startswith("Your data was downloaded: "))
    browser.type("#delete-account-email", "someone-else@example.com")
    browser.click("#delete-account-form button")
    wait_for("the refusal of another address",
             lambda: "email address" in browser.text("status").lower() and browser.visible("signed-in"))
    browser.clear("#delete-account-email")
    browser.type("#delete-account-email", email)
    browser.click("#delete-account-form button")
    wait_for("the deletion", lambda: browser.text("status") == "Your account was deleted." and browser.visible("signed-out"))
    browser.clear("#sign-in-email")
    browser.clear("#sign-in-password")
    browser.type("#sign-in-email", email)
    browser.type("#sign-in-password", "correct horse battery")
    browser.click("#sign-in-form button")
    wait_for("the password refused", lambda: "incorrect" in browser.text("status") and browser.visible("signed-out"))
    print("browser test: data downloaded, account deleted, and its password refused afterwards")


def passkey_only_account(browser, origin):
    """Done-when of issue #42 on the page: an account created with a passkey only signs out and in with it, has nothing
    to remove, gets a password, removes it again, lists and ends a session, downloads its data, is deleted, and then
    signs in neither with the passkey nor with the password it once had."""
    email = "passkey-only@example.com"
    browser.call("POST", "/url", {"url": origin + "/"})
    wait_for("the page", lambda: browser.visible("signed-out") or browser.visible("signed-in"))
    if browser.visible("signed-in"):  # autofill may have signed in with the other account's passkey on load
        browser.click("#sign-out")
        wait_for("the signed-out view", lambda: browser.visible("signed-out"))
    label = browser.call("GET", f"/element/{browser.element('#passkey-sign-up')}/computedlabel")
    if label != "Create account with a passkey":
        fail(f"the passkey sign-up button's accessible name is {label!r}")
    browser.clear("#sign-up-email")
    browser.type("#sign-up-email", email)
    browser.type("#sign-up-name", "Pat")
    browser.click("#passkey-sign-up")
    wait_for("the signed-in view after the passkey sign-up",
             lambda: browser.text("who") == email and browser.text("methods") == "passkey")
    if browser.text("status") != "Account created with a passkey: no password needed.":
        fail(f"unexpected status after the passkey sign-up: {browser.text('status')!r}")
    wait_for("the password card", lambda: "no password" in browser.text("password-state"))
    if browser.visible("remove-password"):
        fail("an account without a password offers to remove it")
    print("browser test: an account created with a passkey, no password, nothing to remove")

    browser.click("#sign-out")
    wait_for("the signed-out view", lambda: browser.visible("signed-out"))
    browser.clear("#sign-in-email")
    browser.type("#sign-in-email", email)  # only this account's passkey is offered
    browser.click("#passkey-sign-in")
    wait_for("the passkey sign-in", lambda: browser.text("who") == email and browser.text("methods") == "passkey")

    browser.type("#set-password", "a password after all")
    browser.click("#set-password-form button")
    wait_for("the password set", lambda: browser.text("status") == "Your password is set. Every other session was signed out.")
    if not browser.visible("remove-password") or "has a password" not in browser.text("password-state"):
        fail(f"the password card does not show the password: {browser.text('password-state')!r}")
    other = http("POST", f"{origin}/v1/sessions", {"email": email, "password": "a password after all"})["session"]["token"]
    browser.click("#remove-password")
    wait_for("the password removed", lambda: browser.text("status").startswith("Your password is removed"))
    if browser.visible("remove-password") or "no password" not in browser.text("password-state"):
        fail(f"the password card still shows a password: {browser.text('password-state')!r}")
    for token in (other,):
        try:
            http("GET", f"{origin}/v1/session", token=token)
            fail("the password session outlived the password's removal")
        except RuntimeError as error:
            if "-> 401" not in str(error):
                raise
    try:
        http("POST", f"{origin}/v1/sessions", {"email": email, "password": "a password after all"})
        fail("the removed password still signs in")
    except RuntimeError as error:
        if "-> 401" not in str(error):
            raise
    print("browser test: a password set on the passkey-only account, then removed again")

    # A second session (a recovery code's, made on the page), listed and ended by its own button.
    browser.click("#make-recovery-codes")
    wait_for("the recovery codes", lambda: browser.visible("recovery-codes") and len(browser.text("recovery-codes")) > 20)
    code = browser.script("return document.querySelector('#recovery-codes li').textContent")
    second = http("POST", f"{origin}/v1/recovery-codes/verify", {"email": email, "code": code})["session"]["token"]
    browser.script("return refreshLists()")
    wait_for("two sessions listed", lambda: len(browser.script("return [...document.querySelectorAll('#sessions li')]")) == 2)
    browser.click("#sessions li button")
    wait_for("the session ended", lambda: browser.text("status") == "That session is signed out.")
    try:
        http("GET", f"{origin}/v1/session", token=second)
        fail("the session ended from the list still works")
    except RuntimeError as error:
        if "-> 401" not in str(error):
            raise

    browser.click("#download-data")
    wait_for("the data export", lambda: browser.text("status").startswith("Your data was downloaded: "))
    browser.clear("#delete-account-email")
    browser.type("#delete-account-email", email)
    browser.click("#delete-account-form button")
    wait_for("the deletion", lambda: browser.text("status") == "Your account was deleted." and browser.visible("signed-out"))
    browser.clear("#sign-in-email")
    browser.type("#sign-in-email", email)
    browser.click("#passkey-sign-in")
    wait_for("the passkey refused", lambda: browser.script("return document.getElementById('status').className") == "error"
             and browser.visible("signed-out"))
    try:
        http("POST", f"{origin}/v1/sessions", {"email": email, "password": "a password after all"})
        fail("a deleted account's password signs in")
    except RuntimeError as error:
        if "-> 401" not in str(error):
            raise
    print("browser test: the passkey-only account listed and ended a session, downloaded its data, was deleted, and signs in no more")
