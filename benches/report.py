#!/usr/bin/env python3
"""Turns mcpc_bench JSON lines into Markdown tables: each figure beside its raw
floor, the ratio mcpc/raw, and the goal from issue 9.

    python3 benches/report.py results.jsonl [more.jsonl ...]   (or JSON lines on stdin)
"""
import json
import sys

# (key, label, better, goal per transport or None). better: "low" or "high".
# Goals are ratios mcpc/raw from issue 9 (RSS: an absolute bound); "versus" rows
# (mcpc over HTTP/2 beside mcpc over HTTP/1.1, in one run) have issue 28's.
STD_ROWS = [
    ("init_ms", "init: spawn/connect + handshake (ms, median)", "low", None),
    ("init_first_ms", "init, the first in the process (ms)", "low", None),
    ("w1_mean_us", "W1 sequential call, mean (µs)", "low", {"stdio": 1.3, "http": 1.5, "versus": 1.2}),
    ("w1_p50_us", "W1 p50 (µs)", "low", None),
    ("w1_p99_us", "W1 p99 (µs)", "low", None),
    ("w1_calls_s", "W1 calls/s", "high", None),
    ("w2_calls_s", "W2 64 in flight, calls/s", "high", {"stdio": 0.7, "http": 0.6, "versus": 1.0}),
    ("w3_ms_per_list", "W3 list 1000 tools (ms per listing)", "low", {"stdio": 1.5, "http": 1.5}),
    ("w4_mib_s", "W4 1 MiB echo (MiB/s)", "high", {"stdio": 0.85, "http": 0.85}),
    ("w4_ms_per_call", "W4 ms per 1 MiB call", "low", None),
    ("w5_mib_s", "W5 1 MiB text resource read (MiB/s)", "high", None),
    ("w6_mib_s", "W6 1 MiB blob resource read (MiB/s, decoded)", "high", None),
    ("rss_kb", "peak RSS of the client process (kB)", "low", None),
    ("rss_base_kb", "… of which the harness before connecting (kB)", None, None),
    ("cpu_s", "client CPU seconds, whole run", "low", None),
    ("wall_s", "client active wall seconds", "low", None),
    ("idle_cpu_ms", "CPU while connected and idle (ms)", "low", None),
    ("srv_cpu_w1_pct", "server CPU during W1 (% of one core)", None, None),
    ("srv_cpu_w2_pct", "server CPU during W2 (% of one core)", None, None),
]
RSS_GOAL_KB = 12 * 1024


def fmt(v):
    if v is None:
        return "–"
    if isinstance(v, str):
        return v
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def family(transport):
    if "-vs-" in transport:
        return "versus"
    return "stdio" if transport.startswith("stdio") else "http"


def load(paths):
    rows = []
    streams = [open(p) for p in paths] if paths else [sys.stdin]
    for f in streams:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def std_tables(rows, out):
    std = [r for r in rows if "curve" not in r]
    transports = []
    for r in std:
        if r["transport"] not in transports:
            transports.append(r["transport"])
    for t in transports:
        m = next((r for r in std if r["transport"] == t and r["client"] == "mcpc"), None)
        w = next((r for r in std if r["transport"] == t and r["client"] in ("raw", "base")), None)
        out.append(f"\n#### {t}\n")
        if w and w["client"] == "base":
            out.append("| figure | mcpc, HTTP/2 | mcpc, HTTP/1.1 | HTTP/2 / HTTP/1.1 | goal |")
        else:
            out.append("| figure | mcpc | raw floor | mcpc/raw | goal |")
        out.append("|---|---:|---:|---:|---|")
        for key, label, better, goals in STD_ROWS:
            mv = m.get(key) if m else None
            rv = w.get(key) if w else None
            ratio = None
            if isinstance(mv, (int, float)) and isinstance(rv, (int, float)) and rv > 0 and better:
                ratio = mv / rv
            goal = ""
            g = goals.get(family(t)) if goals else None
            if key == "rss_kb" and isinstance(mv, (int, float)):
                goal = f"< {RSS_GOAL_KB // 1024} MB: " + ("met" if mv < RSS_GOAL_KB else "**missed**")
            elif g is not None and ratio is not None:
                ok = ratio <= g if better == "low" else ratio >= g
                goal = (f"≤ {g}x" if better == "low" else f"≥ {g}x") + (
                    ": met" if ok else ": **missed**")
            label2 = label
            if key == "w2_calls_s":
                modes = []
                if m and m.get("w2_mode"):
                    extra = ""
                    if "w2_async_calls_s" in m:
                        extra = (f"; async {fmt(m['w2_async_calls_s'])}, "
                                 f"threads {fmt(m['w2_threads_calls_s'])}")
                    modes.append(f"mcpc {m['w2_mode']}{extra}")
                if w and w.get("w2_mode"):
                    extra = ""
                    if "w2_pipelined_calls_s" in w:
                        extra = f"; HTTP/1.1 pipelined on one connection {fmt(w['w2_pipelined_calls_s'])}"
                    if "w2_unbatched_calls_s" in w:
                        extra = f"; a write per request {fmt(w['w2_unbatched_calls_s'])}"
                    modes.append(f"{w['client']} {w['w2_mode']}{extra}")
                if modes:
                    label2 += " (" + "; ".join(modes) + ")"
            out.append(f"| {label2} | {fmt(mv)} | {fmt(rv)} | "
                       f"{fmt(ratio) + 'x' if ratio is not None else '–'} | {goal} |")


def curve_table(rows, curve, xkey, xlabel, cols, out, title):
    pts = [r for r in rows if r.get("curve") == curve]
    if not pts:
        return
    for t in dict.fromkeys(r["transport"] for r in pts):
        out.append(f"\n#### {title}: {t}\n")
        hdr = [xlabel]
        for key, label, ratio in cols:
            hdr += [f"mcpc {label}", f"raw {label}"] + (["mcpc/raw"] if ratio else [])
        out.append("| " + " | ".join(hdr) + " |")
        out.append("|" + "---:|" * len(hdr))
        xs = sorted(dict.fromkeys(r[xkey] for r in pts if r["transport"] == t))
        for x in xs:
            m = next((r for r in pts if r["transport"] == t and r[xkey] == x and r["client"] == "mcpc"), {})
            w = next((r for r in pts if r["transport"] == t and r[xkey] == x and r["client"] == "raw"), {})
            cells = [fmt(x)]
            for key, label, ratio in cols:
                mv, rv = m.get(key), w.get(key)
                cells += [fmt(mv), fmt(rv)]
                if ratio:
                    cells.append(fmt(mv / rv) + "x" if mv is not None and rv else "–")
            out.append("| " + " | ".join(cells) + " |")


def render(rows):
    out = []
    std_tables(rows, out)
    curve_table(rows, "inflight", "conc", "in flight",
                [("calls_s", "calls/s", True), ("cpu_us_per_call", "CPU µs/call", True),
                 ("sleeps_per_100", "sleeps/100 calls", False)],
                out, "Calls in flight on one client")
    curve_table(rows, "clients", "clients", "clients",
                [("init_ms_total", "connect all (ms)", True), ("calls_s", "calls/s", True),
                 ("cpu_us_per_call", "CPU µs/call", True),
                 ("rss_per_client_kb", "RSS kB/client", False),
                 ("idle_cpu_ms", "idle CPU ms", False)],
                out, "Clients in one process (one call in flight each)")
    curve_table(rows, "sizes", "bytes", "text bytes",
                [("us_per_call", "µs/call", True), ("mib_s", "MiB/s", True),
                 ("cpu_us_per_call", "CPU µs/call", True), ("rss_kb", "peak RSS kB", False)],
                out, "Message size (sequential echo)")
    return "\n".join(out).lstrip("\n")


def main():
    print(render(load(sys.argv[1:])))


if __name__ == "__main__":
    main()
