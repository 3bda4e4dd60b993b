#!/usr/bin/env bash
# Smoke test of the built binary, as a user would run it: start `touchstone serve` on a free loopback port with a
# fresh SQLite file, then drive it with the simulated device (enable -> login -> disable -> login refused) and curl.
# Usage: scripts/smoke.sh [path/to/touchstone]   (default: the debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.build/debug/touchstone}
[ -x "$bin" ] || { echo "smoke: $bin not built (run swift build)"; exit 1; }

work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
server="http://127.0.0.1:$port"
# Trace logging: the end of the script checks that no secret used here reached the log.
TOUCHSTONE_LOG_LEVEL=trace TOUCHSTONE_LOG_FORMAT=json "$bin" serve --port "$port" --database "sqlite:$work/touchstone.sqlite" >"$work/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT

for _ in $(seq 1 100); do
  curl -fsS "$server/health" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { cat "$work/server.log"; echo "smoke: server exited"; exit 1; }
  sleep 0.1
done
grep -q "listening on 127.0.0.1:$port" "$work/server.log" || { cat "$work/server.log"; echo "smoke: no 'listening' log line"; exit 1; }

fail() { echo "smoke: FAILED: $*"; cat "$work/server.log"; exit 1; }
# expect PATTERN WHAT -- CMD...: runs CMD, then looks for PATTERN in its whole output. (Piping into `grep -q` would let
# grep exit early and the writer die of SIGPIPE, which pipefail reports as a failure on large outputs.)
expect() {
  local pattern=$1 what=$2 output
  shift 3
  output=$("$@") || fail "$what: command failed: $output"
  grep -q -- "$pattern" <<<"$output" || fail "$what: no '$pattern' in: $output"
}
device() { "$bin" device "$@" --server "$server" --state "$work/device"; }

expect '"enabled":true' config -- curl -fsS "$server/v1/config"
expect '"openapi": "3.1.0"' openapi.json -- curl -fsS "$server/openapi.json"
# Opened on the address serve listens on (an IP address), the page sends the browser to localhost, where passkeys work.
expect "Location: http://localhost:$port/" "web page redirect" -- curl -sS -D - -o /dev/null "$server/"
expect '<title>Touchstone</title>' "web page" -- curl -fsSL "$server/"
export TOUCHSTONE_PASSWORD="correct horse battery"
expect '"status" : "active"' enable -- device enable --email smoke@example.com --sign-up
expect '"biometric"' login -- device login
expect '"enabled" : true' status -- device status
expect '"disabled"' disable -- device disable
if device login >"$work/refused.json"; then fail "login after disable succeeded"; fi
grep -q '"notEnabled"' "$work/refused.json" || fail "login after disable: $(cat "$work/refused.json")"
# Passkeys through the simulated authenticator (the origin must be the relying party's: localhost).
pk() { "$bin" device "$@" --server "http://localhost:$port" --state "$work/device"; }
expect '"aaguid"' passkey-register -- pk passkey-register --email smoke@example.com
expect '"passkey"' passkey-login -- pk passkey-login
# An account from the phone with the device key alone (no password).
np() { "$bin" device "$@" --server "$server" --state "$work/passwordless"; }
expect '"status" : "active"' passwordless-sign-up -- np enable --email passwordless@example.com --sign-up --no-password
expect '"biometric"' passwordless-login -- np login
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$server/v1/sessions" -d '{"email":"smoke@example.com","password":"wrong"}')
[ "$code" = 401 ] || fail "wrong password gave $code"

# The app PIN and the admin API with curl.
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval('d' + sys.argv[1]))" "$1"; }
expect '"status" : "active"' re-enable -- device enable --email smoke@example.com
token=$(curl -fsS -X POST "$server/v1/sessions" -d "{\"email\":\"smoke@example.com\",\"password\":\"$TOUCHSTONE_PASSWORD\"}" | json "['session']['token']")
registration=$(curl -fsS "$server/v1/biometrics/registrations" -H "Authorization: Bearer $token" | json "['registrations'][0]['id']")
pin=731954
expect '"pin":"set"' set-pin -- curl -fsS -X PUT "$server/v1/biometrics/registrations/$registration/pin" \
  -H "Authorization: Bearer $token" -d "{\"pin\":\"$pin\"}"
pin_token=$(curl -fsS -X POST "$server/v1/pin/authentications" -d "{\"registrationId\":\"$registration\",\"pin\":\"$pin\"}" \
  | json "['session']['token']")
# The simulated phone enrolled a DPoP proof key with its device key: its PIN session is bound to it (issue #43), so
# the token alone, sent as a bearer token by curl, is refused.
code=$(curl -s -o "$work/bound.json" -w '%{http_code}' "$server/v1/session" -H "Authorization: Bearer $pin_token")
[ "$code" = 401 ] && grep -q '"invalid_dpop_proof"' "$work/bound.json" || fail "a bound PIN session as Bearer gave $code: $(cat "$work/bound.json")"
expect 'pin_login' events -- curl -fsS "$server/v1/session/events" -H "Authorization: Bearer $token"
admin_key=$("$bin" admin create-key --name smoke --database "sqlite:$work/touchstone.sqlite" 2>/dev/null)
expect 'smoke@example.com' admin-users -- curl -fsS "$server/v1/admin/users" -H "Authorization: Bearer $admin_key"

# An access token verifies with a standard JWT library in another language (PyJWT), from the JWKS alone, and
# introspection ends it at once after a sign-out.
access_token=$(curl -fsS -X POST "$server/v1/session/token" -H "Authorization: Bearer $token" | json "['accessToken']")
python3 scripts/jwt_interop.py "$server/.well-known/jwks.json" "http://localhost:$port" "http://localhost:$port" "$access_token" ||
  fail "PyJWT did not verify the access token"
expect '"active":true' introspect -- curl -fsS -X POST "$server/v1/tokens/introspect" -H "Authorization: Bearer $admin_key" \
  --data-urlencode "token=$access_token"
curl -fsS -X DELETE "$server/v1/session" -H "Authorization: Bearer $token" >/dev/null
expect '{"active":false}' introspect-after-sign-out -- curl -fsS -X POST "$server/v1/tokens/introspect" \
  -H "Authorization: Bearer $admin_key" --data-urlencode "token=$access_token"

# The metrics scrape as Prometheus reads them (the Prometheus project's Python parser), with the ceremonies above.
python3 scripts/prometheus_check.py "$server/metrics" || fail "the /metrics scrape"
expect 'X-Request-Id' request-id -- curl -fsS -D - -o /dev/null "$server/health"
# Prometheus's own tools: the scrape passes `promtool check metrics` (format and naming lint, HELP lines included), the
# alerting rules of docs/operations.md load, and a real Prometheus server scrapes the instance and answers every query
# of the Grafana dashboard. (.ci/run installs Debian's prometheus package.)
if command -v promtool >/dev/null && command -v prometheus >/dev/null; then
  curl -fsS "$server/metrics" | promtool check metrics || fail "promtool check metrics"
  promtool check rules docs/prometheus/touchstone-rules.yml >/dev/null || fail "promtool check rules"
  prom_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  cat >"$work/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$PWD/docs/prometheus/touchstone-rules.yml"]
scrape_configs:
  - job_name: touchstone
    static_configs: [{targets: ["127.0.0.1:$port"]}]
YML
  prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prometheus-data" \
    --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
  prom_pid=$!
  python3 scripts/prometheus_check.py --prometheus "http://127.0.0.1:$prom_port" docs/grafana/touchstone-dashboard.json ||
    { cat "$work/prometheus.log"; kill $prom_pid; fail "Prometheus scraping the server"; }
  kill $prom_pid; wait $prom_pid 2>/dev/null || true
else
  echo "smoke: promtool/prometheus not installed; the Prometheus server check is skipped"
fi

# The log is JSON, one object per line, each with its time, level and message; request lines name their route.
python3 - "$work/server.log" <<'PY' || fail "the JSON log"
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
objects = [json.loads(line) for line in lines]
assert objects and all({"time", "level", "message"} <= set(o) for o in objects), "a line without time, level or message"
requests = [o for o in objects if o["message"] == "request"]
assert any(o.get("route") == "/v1/biometrics/authentications/finish" and o.get("status") == "200" and "request_id" in o
           and "duration_ms" in o for o in requests), "no request line for a biometric sign-in"
PY

# No secret used above is in the server's trace log (JSON lines).
for secret in "$TOUCHSTONE_PASSWORD" "$pin" "$token" "$pin_token" "$admin_key" "$access_token"; do
  if grep -qF -- "$secret" "$work/server.log"; then fail "a secret appears in the server log"; fi
done
grep -q 'debug' "$work/server.log" || fail "the server log has no debug lines"
# Nor any bound SQL value (the drivers log them below info; the server keeps them out).
if grep -q 'binds=' "$work/server.log"; then fail "the server log shows SQL bound values"; fi

echo "smoke: serve + device enable/login/status/disable + a passwordless sign-up + refused login + passkey register/login + PIN + admin + access token (PyJWT, introspection) + Prometheus scrape + JSON logs + no secrets in trace logs: ok"
