// The OpenID provider's sign-in page: passkeys (the button, and autofill in the email field). The page's forms carry
// the authorization request; a passkey's answer is posted with them, and the server finishes the sign-in.
"use strict";

// fromBase64url, requestOptions, credentialJSON: /webauthn-json.js, loaded before this script.

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

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("passkey-sign-in").addEventListener("click", signInWithPasskey);
  if (!window.PublicKeyCredential) document.getElementById("passkey-sign-in").disabled = true;
  startAutofill();
});
