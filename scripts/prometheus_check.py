#!/usr/bin/env python3
"""Parses a Touchstone /metrics scrape with the Prometheus project's own Python client parser (prometheus_client),
as a Prometheus server would read it, and checks what a smoke run must have produced.

Usage: prometheus_check.py URL
Exits 1 with a message when the text does not parse or a metric the operations guide relies on is missing.
"""
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def main() -> int:
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
