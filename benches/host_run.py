#!/usr/bin/env python3
"""make bench-host: what a catalog of many stdio servers costs mcpc's host (mcpc_host_t),
beside the same servers as single clients connected one after another and, for Python
servers, beside Python's multi-server clients, all in one run.

    python3 benches/host_run.py --bin build/bench [--quick] [--rounds R] [--parts P,..] [--out FILE]

Parts (all by default):
  fast    bench_server (C, ready in about a millisecond; 25 tools in pages of 5), N of them
          for N in 1, 10, 30, 100: `host` (mcpc_host_t, the default concurrency), `host-all`
          (concurrency N) and `serial` (N clients connected one after another, each
          listing its tools), R rounds, the modes taking turns; one more run of each with
          --probe (peak threads and descriptors); and mcpc_bench --mode clients (N clients
          connected one after another, no listing: the figure issue 45 starts from)
  slow    the same servers, each sleeping 300 ms before it reads anything: host and
          host-all for each N, and one single client
  python  30 demo servers (/usr/bin/python3 demo/server.py: 25 tools in 5 pages): host,
          host-all and the anchors (benches/host_anchors.py with the Pythons named by
          MCPC_ANCHOR_*_PY, from tests/peers/install.sh --anchors; an anchor whose Python is
          missing is skipped with a note), R rounds taking turns; and the servers' own
          start: 30 started together, stdin closed, each run to its exit

Every run checks its catalog (N x 25 tools, every server ready); a failed or wrong run
fails the whole (exit 1; a catalog short of tools only after the tables, its run left out
of the medians). --quick (make bench-quick): 1 and 3 servers, a 50 ms start,
2 Python servers, no anchors, one round: proves the benchmark runs, measures nothing.
The figures are medians over the rounds. JSON lines go to --out, the tables to stdout.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from run import machine  # noqa: E402

TOOLS, PAGE = 25, 5
ANCHORS = (("sdk", "MCPC_ANCHOR_SDK_PY"), ("langchain", "MCPC_ANCHOR_LANGCHAIN_PY"),
           ("fastmcp", "MCPC_ANCHOR_FASTMCP_PY"), ("fastmcp-group", "MCPC_ANCHOR_FASTMCP_PY"))


def run_json(args, timeout, env=None):
    """Runs a program that prints JSON lines; host_bench's exit status 3 (a catalog short of
    tools) gives its line, marked incomplete, for the caller to count."""
    t0 = time.monotonic()
    try:
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                           env=env, start_new_session=True)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"FAILED (timeout): {' '.join(args)}")
    if r.returncode == 3 and args[0].endswith("host_bench"):
        print(f"# INCOMPLETE: {' '.join(args)}:\n{r.stderr[-600:]}", file=sys.stderr)
    elif r.returncode != 0:
        raise SystemExit(f"FAILED: {' '.join(args)} (exit {r.returncode}):\n{r.stderr[-2000:]}")
    lines = [json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise SystemExit(f"FAILED: {' '.join(args)}: no output\n{r.stderr[-2000:]}")
    for ln in lines:
        ln["took_s"] = round(time.monotonic() - t0, 3)
    return lines


class Bench:
    def __init__(self, a):
        self.a = a
        self.host_bench = os.path.join(a.bin, "host_bench")
        self.server = os.path.join(a.bin, "bench_server")
        self.rows = []
        self.incomplete = []

    def host(self, part, mode, n, server, probe=False):
        kind = mode.split("-")[0]
        args = [self.host_bench, kind, str(n), "--tools", str(TOOLS), "--label", part,
                "--idle-ms", "50" if self.a.quick else "200"]
        if mode.startswith("host-all"):
            args += ["--concurrency", str(n)]
        if mode == "alone-setsid":
            args.append("--setsid")
        if mode == "host-all-setsid":
            # Each server in a session of its own, as the Python clients start theirs
            # (docs/performance.md: the scheduler's autogroups).
            server = ["setsid", "-w"] + server
        if probe:
            args.append("--probe")
        row = run_json(args + ["--"] + server, 120)[0]
        row.update(part=part, mode=mode, probe=probe)
        self.rows.append(row)
        if not row.get("complete", True):
            self.incomplete.append(f"{part} {mode} {n}")
        return row

    def anchor(self, client, py, n, server):
        row = run_json([py, os.path.join(HERE, "host_anchors.py"), client, str(n), "--"] + server, 300)[0]
        if row["tools"] != n * TOOLS:
            raise SystemExit(f"FAILED: anchor {client}: {row['tools']} tools, expected {n * TOOLS}")
        row.update(part="python", mode=client)
        self.rows.append(row)
        return row

    def fast_server(self, delay=0):
        s = [self.server, "stdio", "--tools", str(TOOLS), "--page-size", str(PAGE)]
        return s + (["--start-delay", str(delay)] if delay else [])

    def rounds(self, part, points, modes, server, rounds, anchors=()):
        for r in range(rounds):
            for n in points:
                todo = [(m, None) for m in modes] + [(c, py) for c, py in anchors if n == points[-1]]
                k = r % len(todo)
                for m, py in todo[k:] + todo[:k]:
                    if py:
                        self.anchor(m, py, n, server)
                    else:
                        self.host(part, m, n, server)
            print(f"# {part}: round {r + 1} of {rounds} done", file=sys.stderr)

    def fast(self):
        points = [1, 3] if self.a.quick else [1, 10, 30, 100]
        server = self.fast_server()
        self.rounds("fast", points, ["host", "host-all", "serial", "alone"], server, self.a.rounds)
        for n in points:
            for m in ("host", "host-all", "serial"):
                self.host("fast", m, n, server, probe=True)
        env = dict(os.environ, BENCH_CURVE_CLIENTS=",".join(map(str, points)), BENCH_CURVE_N="400",
                   BENCH_IDLE_MS="0")
        for row in run_json([os.path.join(self.a.bin, "mcpc_bench"), "stdio", " ".join(server), "--client", "mcpc",
                             "--mode", "clients", "--label", "fast"], 300, env):
            row.update(part="fast", mode="clients")
            self.rows.append(row)

    def slow(self):
        delay = 50 if self.a.quick else 300
        points = [1, 3] if self.a.quick else [1, 10, 30, 100]
        server = self.fast_server(delay)
        self.rounds("slow", points, ["host", "host-all", "alone"], server, max(1, min(self.a.rounds, 3)))
        for _ in range(max(1, min(self.a.rounds, 3))):
            self.host("slow", "serial", 1, server)
        for row in self.rows:
            if row["part"] == "slow":
                row["delay_ms"] = delay

    def python(self):
        n = 2 if self.a.quick else 30
        py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        # An absolute interpreter: a shim on PATH (pyenv's) costs ~0.1 s per start.
        server = [py, os.path.join(ROOT, "demo", "server.py")]
        anchors = []
        if not self.a.quick:
            for client, var in ANCHORS:
                path = os.environ.get(var, "")
                if path and os.path.exists(path):
                    anchors.append((client, path))
                else:
                    print(f"# anchor {client} skipped: ${var} names no Python "
                          "(tests/peers/install.sh --anchors, then source DIR/anchors.env)", file=sys.stderr)
        modes = ["host", "host-all", "alone"]
        if not self.a.quick:
            modes.append("alone-setsid")
            if shutil.which("setsid"):
                modes.append("host-all-setsid")
            else:
                print("# host-all-setsid skipped: needs setsid (util-linux)", file=sys.stderr)
        self.rounds("python", [n], modes, server, max(1, min(self.a.rounds, 3)), anchors)


def med(rows, part, mode, n, key, probe=False):
    vals = [r[key] for r in rows if r.get("part") == part and r.get("mode") == mode and r.get("servers") == n
            and r.get("probe", False) == probe and r.get("complete", True) and key in r]
    return statistics.median(vals) if vals else None


def f(v, fmt="{:.1f}"):
    return "–" if v is None else fmt.format(v)


def ratio(a, b):
    return f(a / b if a and b else None, "{:.2f}x")


def render(rows, head):
    out = [f"Measured {head}; medians of the rounds.", ""]
    fast = sorted({r["servers"] for r in rows if r.get("part") == "fast" and r.get("mode") == "host"})
    if fast:
        out += ["### Fast servers (bench_server, 25 tools in pages of 5): time to a full catalog", "",
                "| servers | servers alone ms | host ms | host, all at once ms | serial clients ms | host / serial "
                "| all at once / serial | connect only (`--mode clients`) ms "
                "| client CPU ms: host, all at once, serial |",
                "|---|---|---|---|---|---|---|---|---|"]
        for n in fast:
            al, h, ha, s = (med(rows, "fast", m, n, "catalog_ms") for m in ("alone", "host", "host-all", "serial"))
            clients = next((r["init_ms_total"] for r in rows if r.get("mode") == "clients" and r.get("clients") == n),
                           None)
            cpu = ", ".join(f(med(rows, "fast", m, n, "start_cpu_ms")) for m in ("host", "host-all", "serial"))
            out.append(f"| {n} | {f(al)} | {f(h)} | {f(ha)} | {f(s)} | {ratio(h, s)} | {ratio(ha, s)} | {f(clients)} "
                       f"| {cpu} |")
        out += ["", "### Fast servers: the client process (host, default concurrency; +: per server past the first)",
                "",
                "| servers | peak RSS KiB | idle RSS KiB | threads | peak threads | fds | peak fds "
                "| + peak RSS | + idle RSS | + idle RSS, serial | + threads | + fds |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        keys = ("hwm_kb", "rss_idle_kb", "threads_idle", "fds_idle")
        one = {k: med(rows, "fast", "host", 1, k) for k in keys}
        one_serial = med(rows, "fast", "serial", 1, "rss_idle_kb")
        for n in fast:
            g = {k: med(rows, "fast", "host", n, k) for k in keys}
            tp, fp = med(rows, "fast", "host", n, "threads_peak", True), med(rows, "fast", "host", n, "fds_peak", True)
            s = med(rows, "fast", "serial", n, "rss_idle_kb")

            def inc(a, b, fmt="{:.1f}"):
                return f((a - b) / (n - 1) if n > 1 and a is not None and b is not None else None, fmt)
            out.append(f"| {n} | {f(g['hwm_kb'], '{:.0f}')} | {f(g['rss_idle_kb'], '{:.0f}')} | "
                       f"{f(g['threads_idle'], '{:.0f}')} | {f(tp, '{:.0f}')} | {f(g['fds_idle'], '{:.0f}')} | "
                       f"{f(fp, '{:.0f}')} | {inc(g['hwm_kb'], one['hwm_kb'])} | "
                       f"{inc(g['rss_idle_kb'], one['rss_idle_kb'])} | {inc(s, one_serial)} | "
                       f"{inc(g['threads_idle'], one['threads_idle'], '{:.2f}')} | "
                       f"{inc(g['fds_idle'], one['fds_idle'], '{:.2f}')} |")
    slow = sorted({r["servers"] for r in rows if r.get("part") == "slow" and r.get("mode") == "host"})
    if slow:
        delay = next(r["delay_ms"] for r in rows if r.get("part") == "slow")
        one = med(rows, "slow", "serial", 1, "catalog_ms")
        out += ["", f"### Servers that take {delay} ms to start: time to a full catalog against one server's start",
                "",
                f"One server's start (one single client, connected and listed): {f(one)} ms.", "",
                "| servers | servers alone ms | host ms | / one server | host, all at once ms | / one server |",
                "|---|---|---|---|---|---|"]
        for n in slow:
            al, h, ha = (med(rows, "slow", m, n, "catalog_ms") for m in ("alone", "host", "host-all"))
            out.append(f"| {n} | {f(al)} | {f(h)} | {ratio(h, one)} | {f(ha)} | {ratio(ha, one)} |")
    py = [r for r in rows if r.get("part") == "python"]
    if py:
        n = py[0]["servers"]
        out += ["", f"### {n} Python demo servers (25 tools in 5 pages each)", "",
                "| client | servers started | listed s | peak RSS MiB | peak RSS / mcpc host's |",
                "|---|---|---|---|---|"]
        host_rss = med(rows, "python", "host", n, "hwm_kb")
        kinds = [("host", "mcpc host (default concurrency)", "64 at once"),
                 ("host-all", "mcpc host, all at once", "together"),
                 ("host-all-setsid", "mcpc host, all at once, each server in its own session (`setsid -w`)",
                  "together"),
                 ("sdk", "mcp `ClientSessionGroup`", "one after another"),
                 ("langchain", "langchain-mcp-adapters `MultiServerMCPClient`", "together"),
                 ("fastmcp", "fastmcp `Client`", "one after another"),
                 ("fastmcp-group", "fastmcp `ClientGroup`", "together"),
                 ("alone", "the servers alone, run to their exit", "together"),
                 ("alone-setsid", "the servers alone, each in its own session", "together")]
        for mode, name, how in kinds:
            if mode.startswith(("host", "alone")):
                t = med(rows, "python", mode, n, "catalog_ms")
                t = t / 1e3 if t is not None else None
                rss = med(rows, "python", mode, n, "hwm_kb")
            else:
                t, rss = med(rows, "python", mode, n, "listed_s"), med(rows, "python", mode, n, "client_maxrss_kb")
            if t is None:
                continue
            vers = next((r for r in py if r["mode"] == mode), {})
            vers = ", ".join(f"{k} {vers[k]}" for k in ("langchain-mcp-adapters", "fastmcp", "mcp") if k in vers)
            out.append(f"| {name}{' (' + vers + ')' if vers else ''} | {how} | {f(t, '{:.3f}')} | "
                       f"{f(rss / 1024 if rss else None, '{:.1f}')} | "
                       f"{f(rss / host_rss if rss and host_rss else None, '{:.1f}x')} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bench")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--parts", default="fast,slow,python")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.quick:
        a.rounds = 1
    b = Bench(a)
    head = machine()
    print(f"# {head}", file=sys.stderr)
    t0 = time.monotonic()
    for part in a.parts.split(","):
        if part not in ("fast", "slow", "python"):
            raise SystemExit(f"unknown part {part}")
        getattr(b, part)()
    if a.out:
        os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
        with open(a.out, "w") as fh:
            for r in b.rows:
                fh.write(json.dumps(r) + "\n")
    print(render(b.rows, head))
    if b.incomplete:
        # A wrong result fails the run, after the figures of the others.
        print(f"# FAILED: {len(b.incomplete)} runs ended with a catalog short of tools (left out of the "
              f"medians): {', '.join(b.incomplete)}", file=sys.stderr)
        sys.exit(1)
    print(f"# all runs passed their checks in {time.monotonic() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
