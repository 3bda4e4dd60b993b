// Touchstone's demo page: approving a transaction confirmation, and signing in with the phone. Loaded after app.js (its state, api() and views), which wires the
// handlers.
"use strict";

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
