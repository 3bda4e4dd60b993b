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

// MARK: Email: verification, sign-in codes, password reset (docs/recovery.md)

function showVerification(user) {
  $("verify-card").hidden = user.emailVerified;
  $("verify-address").textContent = user.email;
}

async function verifyEmail(event) {
  event.preventDefault();
  const { user } = await api("POST", "/v1/email/verification/confirm", { code: $("verify-code").value });
  session.user = user;
  showVerification(user);
  setStatus("Your email address is verified.");
}

async function resendVerification() {
  await api("POST", "/v1/email/verification");
  setStatus("A new code is on its way; the previous one no longer works.");
}

async function requestEmailCode(event) {
  event.preventDefault();
  await api("POST", "/v1/email-codes", { email: $("email-code-email").value });
  $("reset-form").hidden = true;
  $("email-code-verify-form").hidden = false;
  $("email-code").focus();
  setStatus("If an account uses this address, a sign-in code is on its way.");
}

async function verifyEmailCode(event) {
  event.preventDefault();
  await abortPendingCeremonies();
  showSignedIn(await api("POST", "/v1/email-codes/verify", { email: $("email-code-email").value, code: $("email-code").value }));
  $("email-code-verify-form").hidden = true;
  setStatus("Signed in with a code from your mail.");
}

async function recoverySignIn(event) {
  event.preventDefault();
  const email = $("email-code-email");
  if (!email.reportValidity()) return;
  await abortPendingCeremonies();
  showSignedIn(await api("POST", "/v1/recovery-codes/verify", { email: email.value, code: $("recovery-code").value }));
  $("recovery-code").value = "";
  setStatus("Signed in with a recovery code: you may add one new passkey or device now. Make new codes when you can.");
}

async function requestPasswordReset() {
  const email = $("email-code-email");
  if (!email.reportValidity()) return;
  await api("POST", "/v1/password-resets", { email: email.value });
  $("email-code-verify-form").hidden = true;
  $("reset-form").hidden = false;
  $("reset-code").focus();
  setStatus("If an account uses this address, a reset code is on its way.");
}

async function finishReset(answer) {
  $("reset-form").hidden = true;
  if (answer.session) {
    showSignedIn({ user: answer.user, session: answer.session });
    setStatus("Your password is set. Every other session was signed out.");
  } else {
    setStatus("Your password is set and every session was signed out. Sign in again.");
  }
}

async function confirmReset(event) {
  event.preventDefault();
  await finishReset(await api("POST", "/v1/password-resets/confirm", {
    email: $("email-code-email").value, code: $("reset-code").value, newPassword: $("reset-password").value,
  }));
}

// A link from a mail opens this page with its token after '#': the browser never sends it to the server, and nothing
// happens until the user presses the button (mail scanners open links too).
let linkToken = null;

function openLink() {
  const match = /^#(verify-email|reset-password|change-email)=([A-Za-z0-9_-]{43})$/.exec(window.location.hash);
  if (!match) return false;
  linkToken = match[2];
  history.replaceState(null, "", window.location.pathname);
  $("link-page").hidden = false;
  $("signed-out").hidden = true;
  $("signed-in").hidden = true;
  const cards = { "verify-email": "verify-link-card", "reset-password": "reset-link-card", "change-email": "change-link-card" };
  $(cards[match[1]]).hidden = false;
  setStatus(match[1] === "reset-password" ? "Choose a new password." : "Confirm your email address.");
  return true;
}

function closeLink() {
  linkToken = null;
  $("link-page").hidden = true;
  $("verify-link-card").hidden = true;
  $("reset-link-card").hidden = true;
  $("change-link-card").hidden = true;
}

async function confirmChangeLink() {
  const { user } = await api("POST", "/v1/session/email/confirm", { token: linkToken });
  closeLink();
  showSignedOut();
  setStatus(`The account's address is now ${user.email}. Sign in with it.`);
}

async function requestEmailChange(event) {
  event.preventDefault();
  await api("PUT", "/v1/session/email", { email: $("change-email").value });
  $("change-email-confirm-form").hidden = false;
  $("change-email-code").focus();
  setStatus("A code is on its way to the new address; your current address was told.");
}

async function confirmEmailChange(event) {
  event.preventDefault();
  const { user } = await api("POST", "/v1/session/email/confirm", { code: $("change-email-code").value });
  session.user = user;
  $("who").textContent = user.email;
  $("change-email-confirm-form").hidden = true;
  setStatus(`The account's address is now ${user.email}.`);
}

async function makeRecoveryCodes() {
  const { codes } = await api("POST", "/v1/recovery-codes");
  const list = $("recovery-codes");
  list.replaceChildren(...codes.map((code) => {
    const item = document.createElement("li");
    item.textContent = code;
    return item;
  }));
  list.hidden = false;
  setStatus("Ten new recovery codes: write them down now, they are not shown again. The previous ones no longer work.");
}

// From the OpenID provider's sign-in page ("Forgot password?" opens /#forgot-password): straight to the form.
function openForgotPassword() {
  if (window.location.hash !== "#forgot-password" || session) return false;
  history.replaceState(null, "", window.location.pathname);
  $("email-code-email").focus();
  setStatus("Enter your email address, then press \"Forgot password?\".");
  return true;
}

async function confirmVerificationLink() {
  await api("POST", "/v1/email/verification/confirm", { token: linkToken });
  closeLink();
  showSignedOut();
  setStatus("Your email address is verified. You can sign in.");
}

async function confirmResetLink(event) {
  event.preventDefault();
  const answer = await api("POST", "/v1/password-resets/confirm", { token: linkToken, newPassword: $("reset-link-password").value });
  closeLink();
  if (!answer.session) showSignedOut();
  await finishReset(answer);
}

// MARK: Approving a confirmation

let confirmation = null;  // { id, payload }

// Shows the request from its payload (the text the passkey signs), never from another field. Text goes in with
// textContent only.
async function showConfirmation(event) {
  event.preventDefault();
  const id = $("confirmation-id").value.trim();
  const answer = await api("GET", `/v1/confirmations/${encodeURIComponent(id)}`);
  const payload = JSON.parse(answer.payload);
  if (payload.confirmationId !== answer.confirmation.id) throw new Error("The request does not match its payload.");
  confirmation = { id: answer.confirmation.id, payload: answer.payload };
  $("confirmation-summary").textContent = payload.summary;
  const list = $("confirmation-details");
  list.replaceChildren();
  for (const [key, value] of Object.entries(payload.details)) {
    const term = document.createElement("dt");
    term.textContent = key;
    const description = document.createElement("dd");
    description.textContent = typeof value === "string" ? value : JSON.stringify(value);
    list.append(term, description);
  }
  $("confirmation-expires").textContent = new Date(payload.expiresAt).toLocaleString();
  $("confirmation").hidden = false;
  const pending = answer.confirmation.status === "pending";
  $("approve-passkey").disabled = !pending;
  $("decline").disabled = !pending;
  setStatus(pending ? "Check the request, then approve or decline it." : `This request is ${answer.confirmation.status}.`);
}

async function approveWithPasskey() {
  if (!confirmation) return;
  if (conditionalAbort) conditionalAbort.abort();
  const options = await api("POST", `/v1/confirmations/${encodeURIComponent(confirmation.id)}/passkey-options`, {});
  const credential = await navigator.credentials.get({ publicKey: requestOptions(options) });
  const answer = await api("POST", `/v1/confirmations/${encodeURIComponent(confirmation.id)}/passkey-verify`, credentialJSON(credential));
  $("approve-passkey").disabled = true;
  $("decline").disabled = true;
  setStatus(`Approved: ${answer.confirmation.summary}`);
}

async function declineConfirmation() {
  if (!confirmation) return;
  const answer = await api("POST", `/v1/confirmations/${encodeURIComponent(confirmation.id)}/decline`);
  $("approve-passkey").disabled = true;
  $("decline").disabled = true;
  setStatus(`Declined: ${answer.confirmation.summary}`);
}

// MARK: Sign in with your phone

// The browser asks; the account's phone shows three numbers and the user picks the one shown here (or scans the
// code); the page long-polls until the phone decides. The poll token stays in this closure, never in storage.
let phoneRequest = null;

async function phoneSignIn() {
  await abortPendingCeremonies();
  cancelPhoneSignIn();
  const email = $("sign-in-email").value;
  const started = await api("POST", "/v1/sign-in-requests", email ? { email } : {});
  const request = { id: started.requestId, pollToken: started.pollToken, cancelled: false };
  phoneRequest = request;
  $("phone-number").textContent = String(started.number);
  if (started.qrSvg) {
    const svg = new DOMParser().parseFromString(started.qrSvg, "image/svg+xml").documentElement;
    $("phone-qr").replaceChildren(document.importNode(svg, true));
  }
  $("phone-state").textContent = "Waiting for your phone…";
  $("phone-sign-in-panel").hidden = false;
  setStatus(email ? "A sign-in request was sent to your phone." : "Scan the code with your phone's app.");
  while (!request.cancelled) {
    const response = await fetch(`/v1/sign-in-requests/${encodeURIComponent(request.id)}?wait=25`, {
      headers: { Authorization: `Bearer ${request.pollToken}`, Accept: "application/json" },
    });
    const answer = await response.json();
    if (request.cancelled) return;
    if (!response.ok) throw Object.assign(new Error(answer.error?.message ?? `HTTP ${response.status}`), { code: answer.error?.code });
    if (answer.status === "pending") continue;
    $("phone-sign-in-panel").hidden = true;
    phoneRequest = null;
    if (answer.status === "approved" && answer.session) {
      showSignedIn(answer);
      setStatus("Signed in with your phone.");
    } else if (answer.status === "declined") {
      setStatus("The sign-in was declined on your phone.", true);
    } else if (answer.status === "expired") {
      setStatus("The sign-in request expired: try again.", true);
    } else {
      setStatus("The sign-in was approved in another window.");
    }
    return;
  }
}

function cancelPhoneSignIn() {
  if (phoneRequest) phoneRequest.cancelled = true;
  phoneRequest = null;
  $("phone-sign-in-panel").hidden = true;
}

async function revokeOtherSessions() {
  const { revokedSessions } = await api("POST", "/v1/session/sessions/revoke-others");
  await refreshLists();
  setStatus(revokedSessions === 1 ? "Signed out 1 other session." : `Signed out ${revokedSessions} other sessions.`);
}

// Everything the server holds about the user, saved as a file (GET /v1/users/me/export).
async function downloadData() {
  const data = await api("GET", "/v1/users/me/export");
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" }));
  link.download = "touchstone-export.json";
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
  setStatus(`Your data was downloaded: ${data.events.length} events, ${data.sessions.length} sessions, ${data.passkeys.length} passkeys.`);
}

async function deleteAccount(event) {
  event.preventDefault();
  await api("DELETE", "/v1/users/me", { confirmEmail: $("delete-account-email").value });
  $("delete-account-email").value = "";
  showSignedOut();
  setStatus("Your account was deleted.");
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
