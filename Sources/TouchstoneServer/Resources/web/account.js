// Touchstone's demo page: the account as its owner's (issue #42): the password, sessions, the
// data export, deletion. Loaded after app.js (its state, api() and views), which wires the
// handlers.
"use strict";

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

// The password card: an account may have one, or sign in with passkeys and devices only.
function showPassword(user) {
  $("password-state").textContent = user.hasPassword
    ? "Your account has a password. With a passkey or a device to sign in with, you can remove it."
    : "Your account has no password: you sign in with passkeys and devices.";
  $("remove-password").hidden = !user.hasPassword;
  $("set-password-button").textContent = user.hasPassword ? "Change the password" : "Set a password";
}

async function reloadUser() {
  const { user } = await api("GET", "/v1/session");
  session.user = user;
  showPassword(user);
}

async function setPassword(event) {
  event.preventDefault();
  const had = session.user.hasPassword;
  await api("PUT", "/v1/session/password", { newPassword: $("set-password").value });
  $("set-password").value = "";
  await reloadUser();
  await refreshLists();
  setStatus(`Your password is ${had ? "changed" : "set"}. Every other session was signed out.`);
}

async function removePassword() {
  await api("DELETE", "/v1/session/password");
  await reloadUser();
  await refreshLists();
  setStatus("Your password is removed: sign in with a passkey or a device. Every other session was signed out.");
}
