// The Touchstone admin console: plain DOM code against the admin API (/v1/admin/...). The admin key lives in this
// closure only: never in web storage or a cookie; reloading the page signs out.
"use strict";

(() => {
  let adminKey = null;
  let auditCursor = null;
  let currentUserId = null;

  const { $, status, element, when, drawChart } = window.TouchstoneAdminDOM;

  class APIError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  async function api(method, path, body) {
    const headers = { Authorization: `Bearer ${adminKey}` };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (response.status === 204) return {};
    const text = await response.text();
    const json = text ? JSON.parse(text) : {};
    if (!response.ok) {
      const error = json.error || {};
      if (response.status === 401) signOut("The admin key was refused or revoked.");
      throw new APIError(response.status, error.code || "error", error.message || `HTTP ${response.status}`);
    }
    return json;
  }

  // Runs an action, reporting its failure in the status line.
  async function attempt(action) {
    try {
      await action();
    } catch (error) {
      status(error.code ? `${error.code}: ${error.message}` : String(error), true);
    }
  }

  // MARK: Sign-in

  function signOut(message) {
    adminKey = null;
    currentUserId = null;
    $("console").hidden = true;
    $("signed-out").hidden = false;
    $("sign-out").hidden = true;
    $("admin-key").value = "";
    status(message || "Signed out.");
  }

  async function signIn(event) {
    event.preventDefault();
    adminKey = $("admin-key").value.trim();
    $("admin-key").value = "";
    await attempt(async () => {
      await api("GET", "/v1/admin/policy");
      $("signed-out").hidden = true;
      $("console").hidden = false;
      $("sign-out").hidden = false;
      status("Signed in.");
      await showTab("dashboard");
    });
  }

  // MARK: Tabs

  async function showTab(name) {
    for (const panel of document.querySelectorAll(".panel")) panel.hidden = panel.id !== name;
    for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("active", tab.dataset.tab === name);
    if (name === "dashboard") await loadDashboard();
    if (name === "policy") await loadPolicy();
    if (name === "clients") await loadClients();
    if (name === "webhooks") await loadWebhooks();
    if (name === "audit") await loadAudit(true);
  }

  // MARK: Dashboard

  async function loadDashboard() {
    await attempt(async () => {
      const stats = await api("GET", `/v1/admin/stats?window=${$("stats-window").value}`);
      drawChart(stats);
      const rows = $("by-method").querySelector("tbody");
      rows.replaceChildren();
      for (const method of ["password", "biometric", "pin", "passkey"]) {
        let success = 0, failure = 0;
        for (const bucket of stats.buckets) {
          success += bucket.signIns[method]?.success || 0;
          failure += bucket.signIns[method]?.failure || 0;
        }
        rows.append(element("tr", { "data-method": method }, element("td", {}, method), element("td", {}, success), element("td", {}, failure)));
      }
      const codes = Object.entries(stats.failuresByCode).sort((a, b) => b[1] - a[1]);
      $("failures-by-code").replaceChildren(
        ...(codes.length ? codes.map(([code, count]) => element("li", {}, element("span", {}, code), element("strong", {}, count)))
          : [element("li", {}, element("span", {}, "No failures."))]));
      $("incidents").replaceChildren(
        element("dt", {}, "Lockouts"), element("dd", {}, stats.lockouts),
        element("dt", {}, "PINs disabled"), element("dd", {}, stats.pinDisabled),
        element("dt", {}, "Rate-limited requests"), element("dd", {}, stats.rateLimited),
        element("dt", {}, "Addresses blocked"), element("dd", {}, stats.addressesBlocked));
      const blocked = await api("GET", "/v1/admin/blocked-addresses");
      $("blocked-addresses").replaceChildren(
        ...(blocked.addresses.length ? blocked.addresses.map((entry) => element("li", {},
          element("span", {}, `${entry.address} — ${entry.failures} failures, blocked until ${when(entry.blockedUntil)}`),
          action("Unblock", `Unblock ${entry.address}?`, async () => {
            await api("DELETE", `/v1/admin/blocked-addresses/${encodeURIComponent(entry.address)}`);
            status(`${entry.address} unblocked.`);
            await loadDashboard();
          })))
          : [element("li", {}, element("span", {}, "No address is blocked."))]));
    });
  }

  // A button that asks before doing something that cannot be undone.
  function action(label, question, perform, className = "") {
    const button = element("button", { type: "button", class: className }, label);
    button.addEventListener("click", () => {
      if (window.confirm(question)) attempt(perform);
    });
    return button;
  }

  // MARK: Clients

  function showSecret(client, secret) {
    $("client-secret-name").textContent = client.name;
    $("client-secret-value").textContent = secret;
    $("client-secret").hidden = false;
  }

  async function loadClients() {
    const { clients } = await api("GET", "/v1/admin/clients");
    $("client-list").replaceChildren(...(clients.length ? clients.map((client) => {
      const item = element("li", { "data-client": client.clientId },
        element("span", {}, client.name, " ",
          element("small", {}, `${client.clientId} · ${client.redirectUris.join(", ")}`)),
        badge(client.public ? "public" : "confidential", "active"));
      if (client.firstParty) item.append(badge("first-party", "active"));
      if (client.ciba) item.append(badge("CIBA", "active"));
      if (client.dpopBoundAccessTokens) item.append(badge("DPoP", "active"));
      if (!client.public) {
        item.append(action("Rotate secret", `Replace the secret of ${client.name}? The old one stops working at once.`, async () => {
          const rotated = await api("POST", `/v1/admin/clients/${encodeURIComponent(client.clientId)}/rotate-secret`);
          showSecret(client, rotated.clientSecret);
          status(`New secret for ${client.name}.`);
        }));
      }
      item.append(action("Delete", `Delete ${client.name}? Its users' grants and tokens end.`, async () => {
        await api("DELETE", `/v1/admin/clients/${encodeURIComponent(client.clientId)}`);
        $("client-secret").hidden = true;
        status(`${client.name} deleted.`);
        await loadClients();
      }, "danger"));
      return item;
    }) : [element("li", {}, element("span", {}, "No client is registered."))]));
  }

  async function createClient(event) {
    event.preventDefault();
    await attempt(async () => {
      const lines = (id) => $(id).value.split("\n").map((line) => line.trim()).filter((line) => line);
      const body = {
        name: $("client-name").value.trim(),
        redirectUris: lines("client-redirects"),
        postLogoutRedirectUris: lines("client-post-logout"),
        public: $("client-public").checked,
        firstParty: $("client-first-party").checked,
        ciba: $("client-ciba").checked,
        dpopBoundAccessTokens: $("client-dpop").checked,
      };
      if ($("client-backchannel").value.trim()) body.backchannelLogoutUri = $("client-backchannel").value.trim();
      const created = await api("POST", "/v1/admin/clients", body);
      $("client-form").reset();
      if (created.clientSecret) showSecret(created, created.clientSecret);
      else $("client-secret").hidden = true;
      status(`${created.name} registered: client id ${created.clientId}.`);
      await loadClients();
    });
  }

  // MARK: Webhooks

  function showWebhookSecret(endpoint, secret) {
    $("webhook-secret-url").textContent = endpoint.url;
    $("webhook-secret-value").textContent = secret;
    $("webhook-secret").hidden = false;
  }

  async function loadWebhooks() {
    const [{ endpoints }, { eventTypes }] = await Promise.all([
      api("GET", "/v1/admin/webhooks"), api("GET", "/v1/admin/webhooks/event-types"),
    ]);
    const legend = $("webhook-types").querySelector("legend");
    $("webhook-types").replaceChildren(legend, ...eventTypes.filter((type) => type.type !== "webhook.test").map((type) =>
      element("label", { class: "check", title: type.summary },
        element("input", { type: "checkbox", className: "webhook-type", value: type.type }), type.type)));
    $("webhook-list").replaceChildren(...(endpoints.length ? endpoints.map((endpoint) => {
      const path = `/v1/admin/webhooks/${encodeURIComponent(endpoint.id)}`;
      const item = element("li", { "data-webhook": endpoint.id },
        element("span", {}, endpoint.url, " ",
          element("small", {}, [endpoint.id, endpoint.events.join(", "), endpoint.description].filter(Boolean).join(" · "))),
        badge(endpoint.enabled ? "enabled" : `disabled${endpoint.disabledReason ? ` (${endpoint.disabledReason})` : ""}`,
          endpoint.enabled ? "active" : "locked"));
      const button = (label, perform) => {
        const node = element("button", { type: "button" }, label);
        node.addEventListener("click", () => attempt(perform));
        return node;
      };
      item.append(button("Deliveries", () => showDeliveries(endpoint)));
      if (endpoint.enabled) {
        item.append(button("Send test", async () => {
          const queued = await api("POST", `${path}/test`);
          status(`Test event ${queued.eventId} queued for ${endpoint.url}.`);
        }));
      }
      item.append(button(endpoint.enabled ? "Disable" : "Enable", async () => {
        await api("PATCH", path, { enabled: !endpoint.enabled });
        status(`${endpoint.url} ${endpoint.enabled ? "disabled" : "enabled"}.`);
        await loadWebhooks();
      }));
      item.append(action("Rotate secret", `Give ${endpoint.url} a new secret? The old one keeps signing beside it for 24 hours.`, async () => {
        const rotated = await api("POST", `${path}/rotate-secret`);
        showWebhookSecret(endpoint, rotated.secret);
        status(`New secret for ${endpoint.url}.`);
      }));
      item.append(action("Delete", `Delete the endpoint ${endpoint.url} with its queued events?`, async () => {
        await api("DELETE", path);
        $("webhook-secret").hidden = true;
        $("webhook-deliveries").hidden = true;
        status(`${endpoint.url} deleted.`);
        await loadWebhooks();
      }, "danger"));
      return item;
    }) : [element("li", {}, element("span", {}, "No webhook endpoint is registered."))]));
  }

  async function showDeliveries(endpoint) {
    const path = `/v1/admin/webhooks/${encodeURIComponent(endpoint.id)}`;
    const { deliveries } = await api("GET", `${path}/deliveries?limit=50`);
    $("webhook-deliveries-url").textContent = endpoint.url;
    $("webhook-delivery-table").querySelector("tbody").replaceChildren(...deliveries.map((delivery) => {
      const retry = element("button", { type: "button" }, "Send again");
      retry.setAttribute("aria-label", `Send ${delivery.type} ${delivery.eventId} again`);
      retry.addEventListener("click", () => attempt(async () => {
        await api("POST", `${path}/deliveries/${encodeURIComponent(delivery.eventId)}/retry`);
        status(`${delivery.eventId} queued again.`);
        await showDeliveries(endpoint);
      }));
      const attempts = delivery.attempts.map((attempt) =>
        `${attempt.number}: ${attempt.status ?? "no answer"} in ${attempt.latencyMs} ms${attempt.error ? ` (${attempt.error})` : ""}`);
      return element("tr", { "data-event": delivery.eventId },
        element("td", {}, when(delivery.createdAt)),
        element("td", {}, delivery.type, " ", element("small", {}, delivery.eventId)),
        element("td", {}, badge(delivery.state, delivery.state === "delivered" ? "success" : delivery.state === "failed" ? "failure" : "")),
        element("td", { class: "detail" }, attempts.join("; ") || (delivery.nextAttemptAt ? `next at ${when(delivery.nextAttemptAt)}` : "")),
        element("td", {}, retry));
    }));
    $("webhook-deliveries").hidden = false;
  }

  async function createWebhook(event) {
    event.preventDefault();
    await attempt(async () => {
      const events = [...document.querySelectorAll(".webhook-type:checked")].map((box) => box.value);
      const created = await api("POST", "/v1/admin/webhooks", {
        url: $("webhook-url").value.trim(), events, description: $("webhook-description").value.trim(),
      });
      $("webhook-form").reset();
      showWebhookSecret(created, created.secret);
      status(`Endpoint ${created.id} added for ${created.url}.`);
      await loadWebhooks();
    });
  }

  // MARK: Users

  async function searchUsers(event) {
    event?.preventDefault();
    await attempt(async () => {
      const email = $("user-search").value.trim();
      const page = await api("GET", `/v1/admin/users?limit=50${email ? `&email=${encodeURIComponent(email)}` : ""}`);
      $("user-list").replaceChildren(...page.users.map((user) => {
        const open = element("button", { type: "button", class: "open-user", "data-user": user.id }, "Open");
        open.addEventListener("click", () => attempt(() => showUser(user.id)));
        return element("li", {}, element("span", {}, user.email, " ", element("small", {}, user.displayName || "")), open);
      }));
      if (!page.users.length) status("No user matches.");
    });
  }

  function badge(text, kind) {
    return element("span", { class: `badge ${kind || text}` }, text);
  }

  async function showUser(id) {
    currentUserId = id;
    const detail = await api("GET", `/v1/admin/users/${id}`);
    const sessions = await api("GET", `/v1/admin/users/${id}/sessions`);
    const events = await api("GET", `/v1/admin/events?userId=${encodeURIComponent(id)}&limit=100`);
    $("user-detail").hidden = false;
    $("user-email").textContent = detail.user.email;
    const password = detail.user.hasPassword ? "has a password" : "no password (passkeys and device keys only)";
    $("user-meta").textContent = `${detail.user.displayName || "No name"} · id ${detail.user.id} · since ${when(detail.user.createdAt)} · ${password}`;
    $("user-device-bound").checked = detail.requireDeviceBoundPasskeys;
    const reload = () => showUser(id);

    $("user-devices").replaceChildren(...(detail.registrations.length ? detail.registrations.map((registration) => {
      const item = element("li", { "data-registration": registration.id },
        element("span", {}, registration.deviceName || registration.deviceId, " ",
          element("small", {}, `${registration.algorithm} · last used ${when(registration.lastUsedAt)}`)),
        badge(registration.status));
      if (registration.status === "locked") {
        item.append(action("Unlock", "Unlock this device?", async () => {
          await api("POST", `/v1/admin/registrations/${registration.id}/unlock`);
          status("Device unlocked.");
          await reload();
        }));
      }
      if (registration.status === "active" || registration.status === "locked") {
        item.append(action("Revoke", "Revoke this device? It will have to be enrolled again.", async () => {
          await api("DELETE", `/v1/admin/registrations/${registration.id}`);
          status("Device revoked.");
          await reload();
        }, "danger revoke-device"));
      }
      return item;
    }) : [element("li", {}, element("span", {}, "No device."))]));

    $("user-passkeys").replaceChildren(...(detail.passkeys.length ? detail.passkeys.map((passkey) => {
      const item = element("li", { "data-passkey": passkey.id },
        element("span", {}, passkey.name || "Passkey", " ",
          element("small", {}, `${passkey.authenticatorName || `AAGUID ${passkey.aaguid}`} · ${passkey.backedUp ? "synced" : "this device only"} · last used ${when(passkey.lastUsedAt)}`)),
        badge(passkey.locked ? "locked" : "active"));
      // A status report the server's policy refuses (FIDO Metadata Service): the model is compromised.
      const refused = passkey.authenticatorStatus && passkey.authenticatorStatus.refusedStatus;
      if (refused) item.append(badge(refused.toLowerCase().replaceAll("_", " "), "locked"));
      if (passkey.locked) {
        item.append(action("Unlock", "Unlock this passkey?", async () => {
          await api("POST", `/v1/admin/passkeys/${passkey.id}/unlock`);
          status("Passkey unlocked.");
          await reload();
        }));
      }
      item.append(action("Remove", "Remove this passkey? The user cannot sign in with it again.", async () => {
        await api("DELETE", `/v1/admin/passkeys/${passkey.id}`);
        status("Passkey removed.");
        await reload();
      }, "danger"));
      return item;
    }) : [element("li", {}, element("span", {}, "No passkey."))]));

    $("user-sessions").replaceChildren(...(sessions.sessions.length ? sessions.sessions.map((session) =>
      element("li", {}, element("span", {}, session.methods.join(" + "), " ",
        element("small", {}, `signed in ${when(session.authenticatedAt)} · expires ${when(session.expiresAt)}`))))
      : [element("li", {}, element("span", {}, "No live session."))]));

    fillEvents($("user-events").querySelector("tbody"), events.events, false);
  }

  function fillEvents(body, events, append, withUser) {
    if (!append) body.replaceChildren();
    for (const event of events) {
      const cells = [element("td", {}, when(event.occurredAt)), element("td", { class: "event-type" }, event.type),
        element("td", {}, badge(event.outcome))];
      if (withUser) cells.push(element("td", {}, event.userId || ""));
      cells.push(element("td", { class: "detail" }, [event.reason, event.clientAddress].filter(Boolean).join(" · ")));
      body.append(element("tr", {}, ...cells));
    }
  }

  async function signOutEverywhere() {
    if (!currentUserId || !window.confirm("Sign this user out of every session?")) return;
    await attempt(async () => {
      const result = await api("POST", `/v1/admin/users/${currentUserId}/sign-out`);
      status(`${result.revokedSessions} sessions ended.`);
      await showUser(currentUserId);
    });
  }

  async function changeDeviceBound() {
    const box = $("user-device-bound");
    const required = box.checked;
    const question = required
      ? "Accept only device-bound passkeys for this user? Their synced passkeys stop working."
      : "Accept synced passkeys for this user again?";
    if (!currentUserId || !window.confirm(question)) {
      box.checked = !required;
      return;
    }
    await attempt(async () => {
      await api("PATCH", `/v1/admin/users/${currentUserId}`, { requireDeviceBoundPasskeys: required });
      status(required ? "Only device-bound passkeys now." : "Synced passkeys accepted again.");
      await showUser(currentUserId);
    });
  }

  // MARK: Policy

  async function loadPolicy() {
    await attempt(async () => {
      const policy = await api("GET", "/v1/admin/policy");
      $("policy-biometrics").checked = policy.biometricsEnabled;
      $("policy-device").value = policy.devicePolicy;
      for (const box of document.querySelectorAll(".policy-algorithm")) box.checked = policy.algorithms.includes(box.value);
      $("policy-lockout").value = policy.lockoutThreshold;
      $("policy-pin").value = policy.pinMaxAttempts;
      $("policy-lifetime").value = policy.sessionLifetimeMinutes;
      $("policy-idle").value = policy.sessionIdleMinutes;
    });
  }

  async function savePolicy(event) {
    event.preventDefault();
    if (!window.confirm("Apply this policy to every instance?")) return;
    await attempt(async () => {
      await api("PATCH", "/v1/admin/policy", {
        biometricsEnabled: $("policy-biometrics").checked,
        devicePolicy: $("policy-device").value,
        algorithms: [...document.querySelectorAll(".policy-algorithm")].filter((box) => box.checked).map((box) => box.value),
        lockoutThreshold: Number($("policy-lockout").value),
        pinMaxAttempts: Number($("policy-pin").value),
        sessionLifetimeMinutes: Number($("policy-lifetime").value),
        sessionIdleMinutes: Number($("policy-idle").value),
      });
      status("Policy saved.");
      await loadPolicy();
    });
  }

  // MARK: Audit trail

  function auditQuery(limit) {
    const parameters = new URLSearchParams({ limit: String(limit) });
    if ($("audit-type").value.trim()) parameters.set("type", $("audit-type").value.trim());
    if ($("audit-user").value.trim()) parameters.set("userId", $("audit-user").value.trim());
    if ($("audit-since").value) parameters.set("since", new Date($("audit-since").value).toISOString());
    return parameters;
  }

  async function loadAudit(reset) {
    await attempt(async () => {
      if (reset) auditCursor = null;
      const parameters = auditQuery(50);
      if (auditCursor) parameters.set("cursor", auditCursor);
      const page = await api("GET", `/v1/admin/events?${parameters}`);
      fillEvents($("audit-events").querySelector("tbody"), page.events, !reset, true);
      auditCursor = page.nextCursor || null;
      $("audit-more").hidden = !auditCursor;
    });
  }

  // Every event matching the filters, newest first, one JSON object per line.
  async function exportAudit() {
    await attempt(async () => {
      const lines = [];
      let cursor = null;
      do {
        const parameters = auditQuery(1000);
        if (cursor) parameters.set("cursor", cursor);
        const page = await api("GET", `/v1/admin/events?${parameters}`);
        for (const event of page.events) lines.push(JSON.stringify(event));
        cursor = page.nextCursor || null;
      } while (cursor);
      const blob = new Blob(lines.map((line) => line + "\n"), { type: "application/x-ndjson" });
      const link = element("a", { href: URL.createObjectURL(blob), download: "touchstone-audit.jsonl" });
      document.body.append(link);
      link.click();
      link.remove();
      status(`Exported ${lines.length} events.`);
    });
  }

  // MARK: Wiring

  document.addEventListener("DOMContentLoaded", () => {
    $("sign-in-form").addEventListener("submit", signIn);
    $("sign-out").addEventListener("click", () => signOut());
    for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => attempt(() => showTab(tab.dataset.tab)));
    $("refresh-stats").addEventListener("click", loadDashboard);
    $("stats-window").addEventListener("change", loadDashboard);
    $("user-search-form").addEventListener("submit", searchUsers);
    $("sign-out-everywhere").addEventListener("click", signOutEverywhere);
    $("user-device-bound").addEventListener("change", changeDeviceBound);
    $("policy-form").addEventListener("submit", savePolicy);
    $("client-form").addEventListener("submit", createClient);
    $("webhook-form").addEventListener("submit", createWebhook);
    $("audit-form").addEventListener("submit", (event) => { event.preventDefault(); loadAudit(true); });
    $("audit-more").addEventListener("click", () => loadAudit(false));
    $("audit-export").addEventListener("click", exportAudit);
  });
})();
