// Touchstone's demo page: the address and getting back in: verification, sign-in codes, password
// resets, mailed links, address changes, recovery codes (docs/recovery.md). Loaded after app.js (its state, api() and views), which wires the
// handlers.
"use strict";

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

// A link to /#forgot-password (from an app or a mail) opens the page straight at the form.
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
