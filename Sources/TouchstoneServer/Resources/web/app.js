// Touchstone's demo page. The bearer token is kept in memory only (never in localStorage, sessionStorage or a cookie
// readable by scripts), so an injected script cannot lift it from storage, and reloading the page signs out.
"use strict";

let session = null; // {user, session}
let conditionalAbort = null;

const $ = (id) => document.getElementById(id);

function setStatus(text, isError = false) {
  const element = $("status");
  element.textContent = text;
  element.className = isError ? "error" : "";
}

async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (session) headers.Authorization = `Bearer ${session.session.token}`;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 204) return null;
  const json = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(json.error ? json.error.message : `HTTP ${response.status}`);
    error.code = json.error ? json.error.code : "http_error";
    throw error;
  }
  return json;
}

// base64url and the WebAuthn JSON forms: /webauthn-json.js (shared with the OpenID sign-in page).

// MARK: Views

function showSignedIn(signedIn) {
  session = signedIn;
  $("signed-out").hidden = true;
  $("signed-in").hidden = false;
  $("who").textContent = signedIn.user.email;
  $("methods").textContent = signedIn.session.methods.join(", ");
  $("expires").textContent = new Date(signedIn.session.expiresAt).toLocaleString();
  showVerification(signedIn.user);
  showPassword(signedIn.user);
  if (conditionalAbort) conditionalAbort.abort();
  refreshLists().catch((error) => setStatus(error.message, true));
}

// Autofill is armed once per page load (as browsers recommend, on load); after a sign-out it comes back with the next
// load, so that signing out does not immediately offer to sign back in.
function showSignedOut({ armAutofill } = { armAutofill: false }) {
  session = null;
  confirmation = null;
  $("confirmation").hidden = true;
  $("recovery-codes").replaceChildren();
  $("recovery-codes").hidden = true;
  $("signed-in").hidden = true;
  $("signed-out").hidden = false;
  if (armAutofill) startConditionalSignIn();
}

function listItem(text, detail, actions, icon) {
  const item = document.createElement("li");
  if (icon && icon.startsWith("data:image/")) {
    // The authenticator's icon from the FIDO Metadata Service (a data: URL; the page's CSP allows no other images).
    const image = document.createElement("img");
    image.src = icon;
    image.alt = "";
    image.className = "authenticator-icon";
    item.append(image);
  }
  const label = document.createElement("span");
  label.textContent = text;
  const small = document.createElement("small");
  small.textContent = ` ${detail}`;
  label.append(small);
  item.append(label);
  for (const [title, handler, accessibleName] of actions) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = title;
    // Several items' buttons say the same ("Sign out"): the accessible name says which item.
    if (accessibleName) button.setAttribute("aria-label", accessibleName);
    button.addEventListener("click", () => handler().catch((error) => setStatus(error.message, true)));
    item.append(button);
  }
  return item;
}

// MARK: The Signal API: keep the browser's passkey manager in step with the server (where the browser has it).

// Tells the passkey manager which of this user's passkeys the server still accepts (others disappear from its lists),
// and the user's current name.
async function signalAccepted({ passkeys, rpId, userHandle }) {
  if (!window.PublicKeyCredential) return;
  try {
    if (PublicKeyCredential.signalAllAcceptedCredentials) {
      await PublicKeyCredential.signalAllAcceptedCredentials({
        rpId, userId: userHandle, allAcceptedCredentialIds: passkeys.map((passkey) => passkey.credentialId),
      });
    }
    if (PublicKeyCredential.signalCurrentUserDetails && session) {
      await PublicKeyCredential.signalCurrentUserDetails({
        rpId, userId: userHandle, name: session.user.email, displayName: session.user.displayName || session.user.email,
      });
    }
  } catch (error) {
    console.warn("passkey signal not delivered", error);
  }
}

// Tells the passkey manager that a credential the user picked is not one the server knows (removed, or from another
// database): it may hide or delete it. Only the holder of the credential learns this; no account is revealed.
async function signalUnknown(rpId, credentialId) {
  if (!window.PublicKeyCredential || !PublicKeyCredential.signalUnknownCredential) return;
  try {
    await PublicKeyCredential.signalUnknownCredential({ rpId, credentialId });
  } catch (error) {
    console.warn("passkey signal not delivered", error);
  }
}

async function refreshLists() {
  const list = await api("GET", "/v1/passkeys");
  const { passkeys } = list;
  await signalAccepted(list);
  $("passkeys").replaceChildren(
    ...(passkeys.length ? passkeys.map((passkey) =>
      listItem(passkey.name || passkey.authenticatorName || "Unnamed passkey",
        `${passkey.authenticatorName && passkey.name ? passkey.authenticatorName + ", " : ""}added ${new Date(passkey.createdAt).toLocaleDateString()}${passkey.backedUp ? ", synced" : ", this device only"}`, [
        ["Rename", async () => {
          const name = prompt("New name", passkey.name || "");
          if (name === null) return;
          await api("PATCH", `/v1/passkeys/${passkey.id}`, { name });
          await refreshLists();
        }],
        ["Remove", async () => {
          await api("DELETE", `/v1/passkeys/${passkey.id}`);
          await refreshLists();
        }],
      ], passkey.authenticatorIcon)) : [listItem("No passkeys yet", "", [])])
  );
  const { registrations } = await api("GET", "/v1/biometrics/registrations");
  const active = registrations.filter((registration) => registration.status === "active");
  $("devices").replaceChildren(
    ...(active.length ? active.map((device) =>
      listItem(device.deviceName || device.deviceId, `${device.algorithm}, ${device.lastUsedAt ? "last used " + new Date(device.lastUsedAt).toLocaleDateString() : "never used"}`, [
        ["Remove", async () => {
          await api("DELETE", `/v1/biometrics/registrations/${device.id}`);
          await refreshLists();
        }],
      ])) : [listItem("No biometric devices", "", [])])
  );
  // Where the account is signed in: end one session, or all but this one.
  const { sessions } = await api("GET", "/v1/session/sessions");
  $("sessions").replaceChildren(...sessions.map((session) => {
    const what = session.current ? "This browser" : (session.client ? `${session.client} (signed in through it)` : (session.userAgent || "Unknown browser"));
    const seen = session.lastSeenAt ? `last used ${new Date(session.lastSeenAt).toLocaleString()}` : `since ${new Date(session.createdAt).toLocaleString()}`;
    const detail = `${session.methods.join(", ")}${session.address ? ", from " + session.address : ""}, ${seen}`;
    return listItem(what, detail, session.current ? [] : [
      ["Sign out", async () => {
        await api("DELETE", `/v1/session/sessions/${encodeURIComponent(session.id)}`);
        await refreshLists();
        setStatus("That session is signed out.");
      }, `Sign out ${what}, ${detail}`],
    ]);
  }));
  // Apps signed in with Touchstone (OpenID Connect) that the user allowed: withdrawing ends their access.
  const { grants } = await api("GET", "/v1/grants");
  $("grants").replaceChildren(
    ...(grants.length ? grants.map((grant) =>
      listItem(grant.clientName, `${grant.scopes.join(", ")}; allowed ${new Date(grant.grantedAt).toLocaleDateString()}`, [
        ["Withdraw", async () => {
          await api("DELETE", `/v1/grants/${encodeURIComponent(grant.clientId)}`);
          setStatus(`${grant.clientName} can no longer use your account.`);
          await refreshLists();
        }],
      ])) : [listItem("No apps yet", "", [])])
  );
}

// MARK: Actions

async function signUp(event) {
  event.preventDefault();
  const body = { email: $("sign-up-email").value, password: $("sign-up-password").value };
  if ($("sign-up-name").value) body.displayName = $("sign-up-name").value;
  showSignedIn(await api("POST", "/v1/users", body));
  setStatus("Account created.");
}

// An account with a passkey and no password (POST /v1/passkeys/sign-ups/options, then /verify with the new passkey).
async function passkeySignUp() {
  const email = $("sign-up-email");
  if (!email.reportValidity()) return;
  await abortPendingCeremonies();
  const body = { email: email.value };
  if ($("sign-up-name").value) body.displayName = $("sign-up-name").value;
  const options = await api("POST", "/v1/passkeys/sign-ups/options", body);
  const credential = await navigator.credentials.create({ publicKey: creationOptions(options) });
  showSignedIn(await api("POST", "/v1/passkeys/sign-ups/verify", { ...credentialJSON(credential), name: "Passkey on this device" }));
  setStatus("Account created with a passkey: no password needed.");
}

// A browser runs one WebAuthn request at a time: a pending autofill (conditional get) or automatic upgrade
// (conditional create) must end before the user's own request, or that one fails with "A request is already pending".
let upgradeAbort = null;

async function abortPendingCeremonies() {
  if (conditionalAbort) conditionalAbort.abort();
  if (upgradeAbort) upgradeAbort.abort();
  conditionalAbort = upgradeAbort = null;
  await new Promise((resolve) => setTimeout(resolve, 0));
}

async function signIn(event) {
  event.preventDefault();
  await abortPendingCeremonies();
  showSignedIn(await api("POST", "/v1/sessions", { email: $("sign-in-email").value, password: $("sign-in-password").value }));
  setStatus("Signed in with your password.");
  upgradeToPasskey();
}

// An automatic passkey upgrade: right after a password sign-in, where the browser supports conditional create, ask it
// to make a passkey without a dialog (its password manager decides, usually for the account whose password it just
// filled in). The server accepts it within the recent-sign-in window and records it as "conditional".
async function upgradeToPasskey() {
  try {
    if (!window.PublicKeyCredential || !PublicKeyCredential.getClientCapabilities) return;
    const capabilities = await PublicKeyCredential.getClientCapabilities();
    if (!capabilities.conditionalCreate) return;
    const { passkeys } = await api("GET", "/v1/passkeys");
    if (passkeys.length) return;
    const options = await api("POST", "/v1/passkeys/registrations/options", {});
    upgradeAbort = new AbortController();
    const credential = await navigator.credentials.create({
      publicKey: creationOptions(options), mediation: "conditional", signal: upgradeAbort.signal,
    });
    await api("POST", "/v1/passkeys/registrations/verify", { ...credentialJSON(credential), name: "Passkey (automatic upgrade)", mediation: "conditional" });
    setStatus("A passkey was added to your account: next time, sign in without your password.");
    await refreshLists();
  } catch (error) {
    // The browser declined quietly (no saved password, the user opted out): nothing to report.
    console.info("no automatic passkey upgrade", error);
  }
}

async function addPasskey() {
  await abortPendingCeremonies();
  const options = await api("POST", "/v1/passkeys/registrations/options", {});
  const credential = await navigator.credentials.create({ publicKey: creationOptions(options) });
  await api("POST", "/v1/passkeys/registrations/verify", { ...credentialJSON(credential), name: "Passkey on this device" });
  setStatus("Passkey added.");
  await refreshLists();
}

async function finishPasskeySignIn(credential, how, rpId) {
  try {
    showSignedIn(await api("POST", "/v1/passkeys/authentications/verify", credentialJSON(credential)));
  } catch (error) {
    if (error.code === "passkey_not_found") await signalUnknown(rpId, credential.id);
    throw error;
  }
  setStatus(`Signed in with a passkey${how}.`);
}

async function passkeySignIn() {
  if (conditionalAbort) conditionalAbort.abort();
  const email = $("sign-in-email").value;
  const options = await api("POST", "/v1/passkeys/authentications/options", email ? { email } : {});
  const credential = await navigator.credentials.get({ publicKey: requestOptions(options) });
  await finishPasskeySignIn(credential, "", options.rpId);
}

// Autofill: offer passkeys in the email field's suggestions where the browser supports conditional mediation.
async function startConditionalSignIn() {
  if (!window.PublicKeyCredential || !PublicKeyCredential.isConditionalMediationAvailable) return;
  if (!(await PublicKeyCredential.isConditionalMediationAvailable())) return;
  conditionalAbort = new AbortController();
  try {
    const options = await api("POST", "/v1/passkeys/authentications/options", {});
    const credential = await navigator.credentials.get({
      publicKey: requestOptions(options),
      mediation: "conditional",
      signal: conditionalAbort.signal,
    });
    await finishPasskeySignIn(credential, " (autofill)", options.rpId);
  } catch (error) {
    if (error.name !== "AbortError") setStatus(error.message, true);
  }
}

async function signOut() {
  await api("DELETE", "/v1/session");
  showSignedOut();
  setStatus("Signed out.");
}

function guarded(handler) {
  return (event) => handler(event).catch((error) => setStatus(error.message, true));
}

document.addEventListener("DOMContentLoaded", () => {
  $("sign-up-form").addEventListener("submit", guarded(signUp));
  $("passkey-sign-up").addEventListener("click", guarded(passkeySignUp));
  $("set-password-form").addEventListener("submit", guarded(setPassword));
  $("remove-password").addEventListener("click", guarded(removePassword));
  $("sign-in-form").addEventListener("submit", guarded(signIn));
  $("passkey-sign-in").addEventListener("click", guarded(passkeySignIn));
  $("phone-sign-in").addEventListener("click", guarded(phoneSignIn));
  $("phone-cancel").addEventListener("click", () => { cancelPhoneSignIn(); setStatus("Sign-in with your phone cancelled."); });
  $("add-passkey").addEventListener("click", guarded(addPasskey));
  $("sign-out").addEventListener("click", guarded(signOut));
  $("revoke-others").addEventListener("click", guarded(revokeOtherSessions));
  $("download-data").addEventListener("click", guarded(downloadData));
  $("delete-account-form").addEventListener("submit", guarded(deleteAccount));
  $("confirmation-form").addEventListener("submit", guarded(showConfirmation));
  $("approve-passkey").addEventListener("click", guarded(approveWithPasskey));
  $("decline").addEventListener("click", guarded(declineConfirmation));
  $("verify-form").addEventListener("submit", guarded(verifyEmail));
  $("verify-resend").addEventListener("click", guarded(resendVerification));
  $("email-code-form").addEventListener("submit", guarded(requestEmailCode));
  $("email-code-verify-form").addEventListener("submit", guarded(verifyEmailCode));
  $("forgot-password").addEventListener("click", guarded(requestPasswordReset));
  $("reset-form").addEventListener("submit", guarded(confirmReset));
  $("verify-link-confirm").addEventListener("click", guarded(confirmVerificationLink));
  $("reset-link-form").addEventListener("submit", guarded(confirmResetLink));
  $("change-link-confirm").addEventListener("click", guarded(confirmChangeLink));
  $("change-email-form").addEventListener("submit", guarded(requestEmailChange));
  $("change-email-confirm-form").addEventListener("submit", guarded(confirmEmailChange));
  $("make-recovery-codes").addEventListener("click", guarded(makeRecoveryCodes));
  $("recovery-sign-in-form").addEventListener("submit", guarded(recoverySignIn));
  if (!window.PublicKeyCredential) setStatus("This browser does not support passkeys.", true);
  // A link opened while the page is already loaded changes only the fragment: no new load.
  window.addEventListener("hashchange", () => openLink() || openForgotPassword());
  if (openLink()) return;
  showSignedOut({ armAutofill: true });
  openForgotPassword();
});
