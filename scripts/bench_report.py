#!/usr/bin/env python3
"""Turns scripts/bench.sh's results (results.jsonl, verify.json) into results.md and throughput.png.

Usage: scripts/bench_report.py DIR   (DIR holds the results; the outputs are written next to them)
"""
import json
import os
import subprocess
import sys


def load(directory):
    runs = [json.loads(line) for line in open(os.path.join(directory, "results.jsonl")) if line.strip()]
    verify = json.load(open(os.path.join(directory, "verify.json")))
    return runs, verify


def fmt(value, digits=0):
    return f"{value:,.{digits}f}"


def errors(run):
    return ", ".join(f"{code} {count}" for code, count in sorted(run["errors"].items())) or "none"


def memory(run):
    peaks = [m["peakRSSMiB"] for m in run["serverMemory"]]
    return " + ".join(fmt(p, 1) for p in peaks) if peaks else "n/a"


def cpu(run):
    """Server CPU per ceremony in microseconds (user + system, all servers of the run), or n/a."""
    value = run.get("serverCPUMicrosecondsPerCeremony")
    return fmt(value) if value is not None else "n/a"


# The targets of issue #18 (performance, round two), on this machine and method.
RATIO_TARGETS = {"WebAuthn": 0.90, "device-key": 0.95}
CEREMONY_TARGETS = {
    ("sqlite", "biometric"): (3000, 35),
    ("sqlite", "passkey"): (2500, None),
    ("postgres-2", "biometric"): (1500, 100),
}
CPU_TARGET_US = 300


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def scale_runs(runs):
    """The stored-registrations runs: (small, large), each in the order run (alternately)."""
    return ([r for r in runs if r["label"] == "scale-small"], [r for r in runs if r["label"] == "scale-large"])


def flatness(runs):
    """(median p50 small, median p50 large, relative change, peak RSS MiB of the large runs), or None."""
    small, large = scale_runs(runs)
    if not small or not large:
        return None
    p50_small = median([r["latencyMs"]["p50"] for r in small])
    p50_large = median([r["latencyMs"]["p50"] for r in large])
    rss = max((m["highWaterMarkMiB"] for r in large for m in r["serverMemory"]), default=0)
    return p50_small, p50_large, p50_large / p50_small - 1, rss


# The OpenID provider (issue #31): code flows (authorize → token with PKCE → userinfo) and refresh grants per second at
# 64 concurrent browsers, with p99 bounds.
OIDC_TARGETS = {"flow": (1500, 50), "refresh": (3000, 50)}
OIDC_NAMES = {"flow": "code flows (authorize → token → userinfo)", "refresh": "refresh-token grants"}


def oidc_runs(runs):
    return [r for r in runs if r["label"].startswith("oidc-")]


def ratio_target(name):
    return next((target for key, target in RATIO_TARGETS.items() if key in name), 0.85)


def summary(runs, verify):
    """The compact table of README.md: each target next to what this run measured."""
    lines = ["| measure | target | this run |", "|---|---|---|"]
    for case in verify:
        if case.get("ratioToRaw"):
            lines.append(f"| {case['name']}, share of raw verification | ≥ {ratio_target(case['name']) * 100:.0f} % | "
                         f"{case['ratioToRaw'] * 100:.1f} % |")
    for label, name in [("sqlite", "SQLite, 1 instance"), ("postgres-2", "PostgreSQL, 2 instances")]:
        for kind in ["biometric", "passkey"]:
            chosen = [r for r in runs if r["label"] == label and r["kind"] == kind and r["devices"] == 64]
            if chosen:
                r = chosen[0]
                goal = CEREMONY_TARGETS.get((label, kind))
                target = "(reported)" if goal is None else f"≥ {fmt(goal[0])}/s" + (f", p99 < {goal[1]} ms" if goal[1] else "")
                lines.append(f"| {kind} ceremonies, 64 devices, {name} | {target} | {fmt(r['ceremoniesPerSecond'])}/s, "
                             f"p99 {fmt(r['latencyMs']['p99'], 1)} ms |")
    for r in oidc_runs(runs):
        rate_goal, p99_goal = OIDC_TARGETS[r["mode"]]
        lines.append(f"| OpenID {OIDC_NAMES[r['mode']]}, 64 browsers, SQLite | ≥ {fmt(rate_goal)}/s, p99 < {p99_goal} ms | "
                     f"{fmt(r['perSecond'])}/s, p99 {fmt(r['latencyMs']['p99'], 1)} ms |")
    dpop = dpop_measures(runs, verify)
    if dpop:
        share, extra, in_server, raw = dpop
        lines.append(f"| token endpoint with DPoP (refresh grants), share of its rate without (server on one core) | "
                     f"≥ {DPOP_TOKEN_TARGET * 100:.0f} % | {share * 100:.0f} % |")
        if in_server or raw:
            reference = (f"{fmt(in_server, 1)} µs in the server" + (f", {fmt(raw, 1)} in a loop" if raw else "")) if in_server \
                else f"{fmt(raw, 1)} µs in a loop"
            lines.append(f"| bound GET /v1/session, server CPU beyond a bearer call at one rate | about one P-256 verification "
                         f"({reference}) | {fmt(extra)} µs ({extra / (in_server or raw):.1f} verifications) |")
    at64 = [r for r in runs if r["label"] == "sqlite" and r["kind"] == "biometric" and r["devices"] == 64]
    if at64 and at64[0].get("serverCPUMicrosecondsPerCeremony") is not None:
        lines.append(f"| server CPU per biometric ceremony (64 devices, SQLite) | ≤ {CPU_TARGET_US} µs | {cpu(at64[0])} µs |")
    flat = flatness(runs)
    if flat:
        p50_small, p50_large, change, rss = flat
        small, large = scale_runs(runs)
        lines.append(f"| server RSS, {fmt(int(large[-1]['stored']))} registrations stored | < 150 MB | {fmt(rss * 2**20 / 1e6, 0)} MB |")
        lines.append(f"| p50 latency, {fmt(int(small[0]['stored']))} → {fmt(int(large[0]['stored']))} registrations "
                     f"(median of {len(small)} alternating runs each) | within 20 % | "
                     f"{fmt(p50_small, 1)} → {fmt(p50_large, 1)} ms ({change * 100:+.0f} %) |")
    return "\n".join(lines)


def mean_of(runs, label, key):
    chosen = [r[key] for r in runs if r["label"] == label and r.get(key) is not None]
    return sum(chosen) / len(chosen) if chosen else None


# DPoP (issue #43): each operation without and with proofs, the server on one core and the load generator on the other.
DPOP_PAIRS = [("code flow (token + UserInfo with proofs)", "pinned-oidc-flow", "pinned-dpop-oidc-flow"),
              ("refresh-token grant (token endpoint with a proof)", "pinned-oidc-refresh", "pinned-dpop-oidc-refresh"),
              ("GET /v1/session (a phone's bound session), as fast as the phones go", "session-bearer", "session-dpop"),
              ("GET /v1/session (a phone's bound session), both at {rate} calls/s", "session-rate-bearer", "session-rate-dpop")]
DPOP_TOKEN_TARGET = 0.80
# "About one signature verification more": at most one and a half P-256 verifications as the server performs them in
# those very calls (the mean of touchstone_dpop_signature_cpu_seconds, read by bench session from /metrics); bench
# verify's loop, with its tables in cache, is the reference only when the server's number is missing.
DPOP_CALL_TARGET = 1.5


def p256_microseconds(verify):
    """One raw P-256 verification in µs, from bench verify (the mean of its raw P-256 cases)."""
    rates = [case["operationsPerSecond"] for case in verify if case["name"] == "P-256 raw (swift-crypto)"]
    return 1e6 / (sum(rates) / len(rates)) if rates else None


def dpop_measures(runs, verify):
    """(token endpoint's rate with / without, bound call's extra CPU µs at one rate, a P-256 verification µs in the
    server during those calls (None when not measured), a raw one in bench verify's loop), or None."""
    rate_a, rate_b = mean_of(runs, "pinned-oidc-refresh", "perSecond"), mean_of(runs, "pinned-dpop-oidc-refresh", "perSecond")
    cpu_a = mean_of(runs, "session-rate-bearer", "serverCPUMicrosecondsPerOperation")
    cpu_b = mean_of(runs, "session-rate-dpop", "serverCPUMicrosecondsPerOperation")
    if None in (rate_a, rate_b, cpu_a, cpu_b):
        return None
    in_server = mean_of(runs, "session-rate-dpop", "serverSignatureCPUMicroseconds")
    return rate_b / rate_a, cpu_b - cpu_a, in_server, p256_microseconds(verify)


def dpop_rows(runs):
    """Each operation without and with DPoP, from the same run (runs repeated alternately: their mean)."""
    rate = next((r["rate"] for r in runs if r["label"] == "session-rate-bearer" and r.get("rate")), None)
    rows = []
    for name, without, with_ in DPOP_PAIRS:
        rate_a, rate_b = mean_of(runs, without, "perSecond"), mean_of(runs, with_, "perSecond")
        if rate_a is None or rate_b is None:
            continue
        cpu_a, cpu_b = mean_of(runs, without, "serverCPUMicrosecondsPerOperation"), mean_of(runs, with_, "serverCPUMicrosecondsPerOperation")
        extra = fmt(cpu_b - cpu_a) if cpu_a is not None and cpu_b is not None else "n/a"
        check = mean_of(runs, with_, "serverSignatureCPUMicroseconds")
        rows.append(f"| {name.format(rate=fmt(rate or 0))} | {fmt(rate_a)} | {fmt(rate_b)} | {rate_b / rate_a * 100:.0f} % | "
                    f"{fmt(cpu_a) if cpu_a is not None else 'n/a'} | {fmt(cpu_b) if cpu_b is not None else 'n/a'} | {extra} | "
                    f"{fmt(check, 1) if check is not None else 'n/a'} |")
    return rows


def markdown(runs, verify):
    lines = ["### Summary (the table in README.md)", "", summary(runs, verify), "",
             "### Verification in one process (`touchstone bench verify`)", "",
             "| case | operations/s | of its raw verification |", "|---|---:|---:|"]
    for case in verify:
        ratio = f"{case['ratioToRaw'] * 100:.1f} %" if case.get("ratioToRaw") else ""
        lines.append(f"| {case['name']} | {fmt(case['operationsPerSecond'])} | {ratio} |")

    for label, title in [("sqlite", "SQLite, one instance"), ("postgres-2", "PostgreSQL, two instances")]:
        chosen = [r for r in runs if r["label"] == label]
        if not chosen:
            continue
        lines += ["", f"### Complete sign-in ceremonies: {title} (`touchstone bench login`)", "",
                  "| ceremony | devices | ceremonies/s | p50 ms | p90 ms | p99 ms | max ms | errors | server CPU µs/ceremony | server peak RSS MiB |",
                  "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
        for r in chosen:
            l = r["latencyMs"]
            lines.append(f"| {r['kind']} | {r['devices']} | {fmt(r['ceremoniesPerSecond'])} | {fmt(l['p50'], 2)} | "
                         f"{fmt(l['p90'], 2)} | {fmt(l['p99'], 2)} | {fmt(l['max'], 1)} | {errors(r)} | {cpu(r)} | {memory(r)} |")

    if oidc_runs(runs):
        lines += ["", "### The OpenID provider: SQLite, one instance (`touchstone bench oidc`)", "",
                  "| operation | browsers | per second | p50 ms | p90 ms | p99 ms | max ms | errors | server CPU µs/operation |",
                  "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
        for r in oidc_runs(runs):
            l = r["latencyMs"]
            server_cpu = r.get("serverCPUMicrosecondsPerOperation")
            lines.append(f"| {OIDC_NAMES[r['mode']]} | {r['browsers']} | {fmt(r['perSecond'])} | {fmt(l['p50'], 2)} | {fmt(l['p90'], 2)} | "
                         f"{fmt(l['p99'], 2)} | {fmt(l['max'], 1)} | {errors(r)} | {fmt(server_cpu) if server_cpu is not None else 'n/a'} |")

    dpop = dpop_rows(runs)
    if dpop:
        lines += ["", "### DPoP side by side (issue #43; SQLite, one instance, same run; the server on one core, the load on the other)", "",
                  "| operation | without DPoP /s | with DPoP /s | with / without | server CPU µs without | with | extra µs "
                  "| a proof's signature check in the server, CPU µs |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        lines += dpop

    variants = [r for r in runs if r["label"].startswith("variant-")]
    if variants:
        lines += ["", "### Round one's switches (biometric, SQLite, 64 devices, same binary)", "",
                  "| configuration | ceremonies/s | p50 ms | p99 ms | server CPU µs/ceremony |", "|---|---:|---:|---:|---:|"]
        names = {"variant-before": "before: a commit per operation, keys parsed per sign-in",
                 "variant-no-group-commit": "key cache only", "variant-no-key-cache": "group commit only",
                 "variant-after": "after: group commit and key cache (the default)"}
        for r in variants:
            l = r["latencyMs"]
            lines.append(f"| {names.get(r['label'], r['label'])} | {fmt(r['ceremoniesPerSecond'])} | {fmt(l['p50'], 2)} | {fmt(l['p99'], 2)} | {cpu(r)} |")

    small, large = scale_runs(runs)
    if small or large:
        lines += ["", "### Stored registrations (biometric, SQLite, 64 devices, the two databases run alternately)", "",
                  "| registrations stored | ceremonies/s | p50 ms | p99 ms | server CPU µs/ceremony | load generator CPU µs/ceremony | server peak RSS MiB |",
                  "|---:|---:|---:|---:|---:|---:|---:|"]
        for r in [r for r in runs if r["label"] in ("scale-small", "scale-large")]:
            l = r["latencyMs"]
            generator = r.get("generatorCPUMicrosecondsPerCeremony")
            lines.append(f"| {fmt(int(r['stored']))} | {fmt(r['ceremoniesPerSecond'])} | {fmt(l['p50'], 2)} | {fmt(l['p99'], 2)} | "
                         f"{cpu(r)} | {fmt(generator) if generator is not None else 'n/a'} | {memory(r)} |")
        flat = flatness(runs)
        if flat:
            lines += ["", f"Median p50: {fmt(flat[0], 2)} ms with {fmt(int(small[0]['stored']))} registrations, "
                          f"{fmt(flat[1], 2)} ms with {fmt(int(large[0]['stored']))} ({flat[2] * 100:+.1f} %)."]

    lines += ["", "### Targets", ""] + targets(runs, verify)
    return "\n".join(lines) + "\n"


def targets(runs, verify):
    out = []
    for case in verify:
        if case.get("ratioToRaw"):
            goal = ratio_target(case["name"])
            verdict = "met" if case["ratioToRaw"] >= goal else f"missed by {(goal - case['ratioToRaw']) * 100:.1f} points"
            out.append(f"- {case['name']} at ≥ {goal * 100:.0f} % of raw: {verdict} ({case['ratioToRaw'] * 100:.1f} %)")
    for (label, kind), (rate_goal, p99_goal) in CEREMONY_TARGETS.items():
        chosen = [r for r in runs if r["label"] == label and r["kind"] == kind and r["devices"] == 64]
        if not chosen:
            continue
        r = chosen[0]
        rate, p99 = r["ceremoniesPerSecond"], r["latencyMs"]["p99"]
        misses = []
        if rate < rate_goal:
            misses.append(f"{rate / rate_goal * 100:.0f} % of the rate")
        if p99_goal and p99 >= p99_goal:
            misses.append(f"p99 {fmt(p99, 1)} ms")
        verdict = "met" if not misses else "missed (" + ", ".join(misses) + ")"
        goal = f"≥ {fmt(rate_goal)}/s" + (f", p99 < {p99_goal} ms" if p99_goal else "")
        out.append(f"- {kind}, 64 devices, {label}: {goal}: {verdict}: {fmt(rate)}/s, p99 {fmt(p99, 2)} ms")
    for r in oidc_runs(runs):
        rate_goal, p99_goal = OIDC_TARGETS[r["mode"]]
        rate, p99 = r["perSecond"], r["latencyMs"]["p99"]
        misses = ([f"{rate / rate_goal * 100:.0f} % of the rate"] if rate < rate_goal else []) + ([f"p99 {fmt(p99, 1)} ms"] if p99 >= p99_goal else [])
        verdict = "met" if not misses else "missed (" + ", ".join(misses) + ")"
        out.append(f"- OpenID {OIDC_NAMES[r['mode']]}, 64 browsers: ≥ {fmt(rate_goal)}/s, p99 < {p99_goal} ms: {verdict}: {fmt(rate)}/s, p99 {fmt(p99, 2)} ms")
    dpop = dpop_measures(runs, verify)
    if dpop:
        share, extra, in_server, raw = dpop
        verdict = "met" if share >= DPOP_TOKEN_TARGET else f"missed by {(DPOP_TOKEN_TARGET - share) * 100:.0f} points"
        out.append(f"- Token endpoint with DPoP at ≥ {DPOP_TOKEN_TARGET * 100:.0f} % of its rate without (refresh grants, "
                   f"server on one core): {verdict} ({share * 100:.0f} %)")
        verification = in_server or raw
        if verification:
            times = extra / verification
            verdict = "met" if times <= DPOP_CALL_TARGET else "missed"
            where = "as the server performed them in those calls" if in_server else "in bench verify's loop"
            loop = f"; {extra / raw:.1f} of bench verify's {fmt(raw, 1)} µs" if in_server and raw else ""
            out.append(f"- A bound call costs about one signature verification more than a bearer call (read as at most "
                       f"{DPOP_CALL_TARGET} P-256 verifications {where}, {fmt(verification * DPOP_CALL_TARGET)} µs): {verdict} "
                       f"({fmt(extra)} µs, {times:.1f} verifications of {fmt(verification, 1)} µs{loop})")
    at64 = [r for r in runs if r["label"] == "sqlite" and r["kind"] == "biometric" and r["devices"] == 64]
    if at64 and at64[0].get("serverCPUMicrosecondsPerCeremony") is not None:
        value = at64[0]["serverCPUMicrosecondsPerCeremony"]
        out.append(f"- Server CPU per ceremony ≤ {CPU_TARGET_US} µs: {'met' if value <= CPU_TARGET_US else 'missed'} ({fmt(value)} µs)")
    flat = flatness(runs)
    if flat:
        p50_small, p50_large, change, rss = flat
        small, large = scale_runs(runs)
        out.append(f"- Server RSS < 150 MB with {fmt(int(large[-1]['stored']))} registrations: "
                   f"{'met' if rss < 150 * 1e6 / 2**20 else 'missed'} (high-water mark {fmt(rss, 1)} MiB)")
        out.append(f"- Latency flat within 20 % from {fmt(int(small[0]['stored']))} to {fmt(int(large[0]['stored']))} "
                   f"registrations (median p50 of {len(small)} alternating runs each): "
                   f"{'met' if abs(change) <= 0.2 else 'missed'} ({change * 100:+.1f} %)")
    return out


def plot(runs, path):
    try:
        import matplotlib
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "matplotlib"], check=True)
        import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(8, 4.5), dpi=120)
    for label, name in [("sqlite", "SQLite, 1 instance"), ("postgres-2", "PostgreSQL, 2 instances")]:
        for kind, style in [("biometric", "-o"), ("passkey", "--s")]:
            chosen = sorted((r for r in runs if r["label"] == label and r["kind"] == kind), key=lambda r: r["devices"])
            if chosen:
                axis.plot([r["devices"] for r in chosen], [r["ceremoniesPerSecond"] for r in chosen], style,
                          label=f"{kind}, {name}")
    axis.axhline(3000, color="grey", linewidth=0.8, linestyle=":", label="target: 3,000 biometric/s at 64 devices")
    axis.set_xscale("log", base=2)
    levels = sorted({r["devices"] for r in runs if r["label"] in ("sqlite", "postgres-2")})
    axis.set_xticks(levels)
    axis.set_xticklabels([str(level) for level in levels])
    axis.set_ylim(bottom=0)
    axis.set_xlabel("concurrent simulated devices")
    axis.set_ylabel("complete sign-in ceremonies per second")
    axis.set_title("Touchstone sign-in throughput (2 cores, load generator on the same machine)")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path)


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "artifacts/bench"
    runs, verify = load(directory)
    text = markdown(runs, verify)
    open(os.path.join(directory, "results.md"), "w").write(text)
    plot(runs, os.path.join(directory, "throughput.png"))
    print(text)


if __name__ == "__main__":
    main()
