// The OpenID provider's sign-in page: passkeys (the button, and autofill in the email field). The page's forms carry
// the authorization request; a passkey's answer is posted with them, and the server finishes the sign-in.
"use strict";

// fromBase64url, requestOptions, creationOptions, credentialJSON: /webauthn-json.js, loaded before this script.

function setStatus(text) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.className = "error";
  status.setAttribute("role", "alert");
}

let conditionalAbort = null;

async function options(email) {
  const response = await fetch("/v1/passkeys/authentications/options", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(email ? { email } : {}),
  });
  const json = await response.json();
  if (!response.ok) throw new Error((json.error && json.error.message) || "The sign-in could not start.");
  return json;
}

function submit(credential) {
  const form = document.getElementById("passkey-form");
  form.elements.credential.value = JSON.stringify(credentialJSON(credential));
  form.submit();
}

async function signInWithPasskey() {
  if (conditionalAbort) conditionalAbort.abort();
  try {
    const form = document.getElementById("passkey-form");
    const email = (document.getElementById("email") || {}).value || form.dataset.loginHint || "";
    const json = await options(email);
    submit(await navigator.credentials.get({ publicKey: requestOptions(json) }));
  } catch (error) {
    if (error.name !== "AbortError") setStatus(error.name === "NotAllowedError" ? "The passkey sign-in was cancelled." : error.message);
  }
}

async function startAutofill() {
  const form = document.getElementById("passkey-form");
  if (form.dataset.autofill !== "on" || !window.PublicKeyCredential || !PublicKeyCredential.isConditionalMediationAvailable) return;
  if (!(await PublicKeyCredential.isConditionalMediationAvailable())) return;
  conditionalAbort = new AbortController();
  try {
    const json = await options("");
    submit(await navigator.credentials.get({ publicKey: requestOptions(json), mediation: "conditional", signal: conditionalAbort.signal }));
  } catch (error) {
    if (error.name !== "AbortError" && error.name !== "NotAllowedError") setStatus(error.message);
  }
}

// Sign in with your phone: the page asks for a sign-in request naming this client, shows the number (and the code to
// scan), waits for the phone's decision, then posts the approved session with the authorization request.
async function signInWithPhone() {
  if (conditionalAbort) conditionalAbort.abort();
  const form = document.getElementById("phone-form");
  const email = (document.getElementById("email") || {}).value || "";
  try {
    const body = { clientId: form.dataset.clientId };
    if (email) body.email = email;
    const response = await fetch("/v1/sign-in-requests", {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
    });
    const started = await response.json();
    if (!response.ok) throw new Error((started.error && started.error.message) || "The sign-in could not start.");
    document.getElementById("phone-number").textContent = String(started.number);
    if (started.qrSvg) {
      const svg = new DOMParser().parseFromString(started.qrSvg, "image/svg+xml").documentElement;
      document.getElementById("phone-qr").replaceChildren(document.importNode(svg, true));
    }
    document.getElementById("phone-sign-in-panel").hidden = false;
    for (;;) {
      const poll = await fetch(`/v1/sign-in-requests/${encodeURIComponent(started.requestId)}?wait=25`, {
        headers: { Authorization: `Bearer ${started.pollToken}` },
      });
      const answer = await poll.json();
      if (!poll.ok) throw new Error((answer.error && answer.error.message) || "The sign-in failed.");
      if (answer.status === "pending") continue;
      document.getElementById("phone-sign-in-panel").hidden = true;
      if (answer.status === "approved" && answer.session) {
        form.elements.session.value = answer.session.token;
        form.submit();
      } else {
        setStatus(answer.status === "expired" ? "The request expired: try again." : "The sign-in was declined on your phone.");
      }
      return;
    }
  } catch (error) {
    setStatus(error.message);
  }
}

// Create an account with a passkey: the page's script makes it (POST /v1/passkeys/sign-ups/options, the browser's
// passkey dialog, /verify), then posts the new account's session with the authorization request.
async function signUpWithPasskey() {
  if (conditionalAbort) conditionalAbort.abort();
  const email = document.getElementById("sign-up-email");
  if (!email.reportValidity()) return;
  try {
    const body = { email: email.value };
    const name = document.getElementById("sign-up-name").value;
    if (name) body.displayName = name;
    const started = await fetch("/v1/passkeys/sign-ups/options", {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
    });
    const options = await started.json();
    if (!started.ok) throw new Error((options.error && options.error.message) || "The account could not be created.");
    const credential = await navigator.credentials.create({ publicKey: creationOptions(options) });
    const verified = await fetch("/v1/passkeys/sign-ups/verify", {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...credentialJSON(credential), name: "Passkey on this device" }),
    });
    const answer = await verified.json();
    if (!verified.ok) throw new Error((answer.error && answer.error.message) || "The account could not be created.");
    const form = document.getElementById("passkey-sign-up-form");
    form.elements.session.value = answer.session.token;
    form.submit();
  } catch (error) {
    setStatus(error.name === "NotAllowedError" ? "The passkey was not created." : error.message);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const signUp = document.getElementById("passkey-sign-up");
  if (signUp) signUp.addEventListener("click", signUpWithPasskey);
  document.getElementById("passkey-sign-in").addEventListener("click", signInWithPasskey);
  const phone = document.getElementById("phone-sign-in");
  if (phone) phone.addEventListener("click", signInWithPhone);
  if (!window.PublicKeyCredential) document.getElementById("passkey-sign-in").disabled = true;
  startAutofill();
});
