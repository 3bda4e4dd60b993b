#!/usr/bin/env python3
"""Parses a Touchstone /metrics scrape with the Prometheus project's own Python client parser (prometheus_client),
as a Prometheus server would read it, and checks what a smoke run must have produced.

Usage: prometheus_check.py URL
       prometheus_check.py --prometheus PROMETHEUS_URL DASHBOARD_JSON
Exits 1 with a message when the text does not parse or a metric the operations guide relies on is missing.

With --prometheus it asks a real Prometheus server that scrapes Touchstone (the smoke test starts one) whether it holds
Touchstone's series, and runs every query of the Grafana dashboard against it: each must be valid PromQL. (That every
metric name a query uses is one the server exposes is checked by MetricsTests against ServerMetrics.catalogue.)
"""
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def query(prometheus, expr):
    url = prometheus + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        return json.load(error)
    except (urllib.error.URLError, ConnectionError) as error:
        # Prometheus still starting: the caller's wait loop asks again.
        return {"status": "unreachable", "error": str(error)}


def check_prometheus(prometheus, dashboard_path) -> int:
    # Wait for the first scrapes (the scrape interval is 1 s).
    deadline = time.time() + 30
    while True:
        answer = query(prometheus, 'touchstone_build_info{job="touchstone"}')
        if answer.get("status") == "success" and answer["data"]["result"]:
            break
        if time.time() > deadline:
            print(f"prometheus_check: Prometheus holds no touchstone_build_info after 30 s: {answer}")
            return 1
        time.sleep(0.5)
    up = query(prometheus, 'up{job="touchstone"}')["data"]["result"]
    if not up or up[0]["value"][1] != "1":
        print(f"prometheus_check: up{{job=\"touchstone\"}} is {up}")
        return 1
    result = query(prometheus, 'group by (__name__) ({__name__=~"touchstone_.+"})')["data"]["result"]
    names = {r["metric"]["__name__"] for r in result}
    for needed in ("touchstone_http_requests_total", "touchstone_ceremonies_total", "touchstone_db_up",
                   "touchstone_http_request_duration_seconds_bucket", "touchstone_process_resident_memory_bytes"):
        if needed not in names:
            print(f"prometheus_check: Prometheus did not scrape {needed}")
            return 1
    dashboard = json.load(open(dashboard_path, encoding="utf-8"))
    expressions = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    for expr in expressions:
        concrete = expr.replace("$__rate_interval", "1m").replace("$__range", "5m")
        answer = query(prometheus, concrete)
        if answer.get("status") != "success":
            print(f"prometheus_check: the dashboard query {expr!r} fails: {answer.get('error')}")
            return 1
    print(f"prometheus_check: Prometheus scraped {len(names)} touchstone series names; "
          f"{len(expressions)} dashboard queries valid: ok")
    return 0


def main() -> int:
    if sys.argv[1] == "--prometheus":
        return check_prometheus(sys.argv[2], sys.argv[3])
    url = sys.argv[1]
    with urllib.request.urlopen(url, timeout=10) as response:
        content_type = response.headers.get("Content-Type", "")
        text = response.read().decode("utf-8")
    if not content_type.startswith("text/plain; version=0.0.4"):
        print(f"prometheus_check: unexpected Content-Type {content_type!r}")
        return 1
    families = {}
    try:
        for family in text_string_to_metric_families(text):
            families[family.name] = family
    except Exception as error:  # the parser raises ValueError and friends on malformed text
        print(f"prometheus_check: the exposition does not parse: {error}")
        return 1

    def total(name, **labels):
        family = families.get(name)
        if family is None:
            return None
        return sum(s.value for s in family.samples
                   if s.name in (name, name + "_total") and all(s.labels.get(k) == v for k, v in labels.items()))

    checks = [
        ("touchstone_http_requests", {}, lambda v: v and v > 0),
        ("touchstone_ceremonies", {"kind": "biometric", "outcome": "success"}, lambda v: v and v >= 1),
        ("touchstone_ceremonies", {"kind": "password", "outcome": "failure"}, lambda v: v and v >= 1),
        ("touchstone_db_up", {}, lambda v: v == 1),
        ("touchstone_build_info", {}, lambda v: v == 1),
    ]
    for name, labels, ok in checks:
        value = total(name, **labels)
        if not ok(value):
            print(f"prometheus_check: {name}{labels} is {value}")
            return 1
    for family in families.values():
        for sample in family.samples:
            for key, value in sample.labels.items():
                if "@" in value:
                    print(f"prometheus_check: an email-like label value {key}={value!r}")
                    return 1
    print(f"prometheus_check: {len(families)} metric families parsed by prometheus_client: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
