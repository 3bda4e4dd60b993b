// base64url <-> ArrayBuffer and WebAuthn's JSON forms, for browsers without parseCreationOptionsFromJSON /
// parseRequestOptionsFromJSON / toJSON. Shared by the web page (app.js) and the OpenID provider's sign-in page.
"use strict";

function fromBase64url(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(text.length / 4) * 4, "=");
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)).buffer;
}

function toBase64url(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function creationOptions(json) {
  if (PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(json);
  return {
    ...json,
    challenge: fromBase64url(json.challenge),
    user: { ...json.user, id: fromBase64url(json.user.id) },
    excludeCredentials: (json.excludeCredentials || []).map((c) => ({ ...c, id: fromBase64url(c.id) })),
  };
}

function requestOptions(json) {
  if (PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(json);
  return {
    ...json,
    challenge: fromBase64url(json.challenge),
    allowCredentials: (json.allowCredentials || []).map((c) => ({ ...c, id: fromBase64url(c.id) })),
  };
}

function credentialJSON(credential) {
  if (typeof credential.toJSON === "function") return credential.toJSON();
  const response = {};
  for (const key of ["clientDataJSON", "attestationObject", "authenticatorData", "signature", "userHandle"]) {
    if (credential.response[key]) response[key] = toBase64url(credential.response[key]);
  }
  return { id: credential.id, rawId: toBase64url(credential.rawId), type: credential.type, response, clientExtensionResults: {} };
}
