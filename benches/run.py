#!/usr/bin/env python3
"""Runs mcpc_bench over stdio, HTTP with JSON replies and HTTP with SSE replies
against bench_server, checks every run, saves the JSON lines and prints the tables.

    python3 benches/run.py --bin build/bench [--quick | --curves] [--repeat N] [--out FILE]
                           [--transports stdio,stdio-1cpu,stdio-2cpu,http-json,http-json-1cpu,http-sse] [--client both]

stdio-1cpu is stdio with everything pinned to one CPU (taskset -c 0); stdio-2cpu pins
the client to CPU 0 and the server to CPU 1, so every message crosses CPUs;
http-json-1cpu pins the HTTP server and the client to CPU 0.

http1-nghttpx and http2-nghttpx put nghttpx (a real HTTP/2 front end, h2c and HTTP/1.1
on one port) before bench_server, which speaks only HTTP/1.1: mcpc speaks HTTP/1.1 or
HTTP/2 with prior knowledge to it, the raw floor HTTP/1.1. http-proxy puts squid (a real
forward proxy with kept-alive connections) between both clients and bench_server.
http2-vs-http1-nghttpx is http2-nghttpx with mcpc over HTTP/1.1 in the floor's place, so
that the two versions are compared in one interleaved run (W1..W6 only). Each is
skipped, with a note, when its program is not installed.

Sizes come from the BENCH_* variables (see benches/README.md); --quick sets small
defaults for the ones not set. Exit status 1 if any run fails or prints bad output.
"""
import argparse
import statistics
import datetime
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

STD_KEYS = ("client init_ms w1_n w1_calls_s w1_mean_us w1_p50_us w1_p99_us w2_n w2_conc "
            "w2_calls_s w3_reps w3_ms_per_list w4_reps w4_bytes w4_mib_s w4_ms_per_call "
            "w5_reps w5_bytes w5_mib_s w5_ms_per_read w6_reps w6_bytes w6_mib_s w6_ms_per_read "
            "rss_kb cpu_s wall_s").split()

QUICK = {
    "BENCH_W1_N": "300", "BENCH_W2_N": "2000", "BENCH_W3_REPS": "2", "BENCH_W4_REPS": "3",
    "BENCH_W5_REPS": "3", "BENCH_W6_REPS": "3",
    "BENCH_WARMUP": "50", "BENCH_BLOCKS": "2", "BENCH_INIT_REPS": "2", "BENCH_IDLE_MS": "100",
    "BENCH_CURVE_N": "400", "BENCH_CURVE_CONCS": "1,64", "BENCH_CURVE_CLIENTS": "1,4",
    "BENCH_CURVE_SIZES": "32,1048576", "BENCH_CURVE_BYTES": "4194304",
}


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else -1
    return (f"{datetime.date.today().isoformat()}, {os.cpu_count()} cores ({cpu}), "
            f"Linux {platform.release()}, load average {load:.2f} at start")


def start_http_server(server, sse, pin):
    args = pin + [server, "http", "--port", "0"] + (["--sse"] if sse else [])
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    if len(line) != 2 or line[0] != "PORT":
        p.kill()
        raise SystemExit(f"bench_server did not say its port: {line}")
    return p, int(line[1])


def stop_http_server(p):
    p.stdin.close()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


# The transports that put a real program between the clients and bench_server: the
# program, and for mcpc's options the HTTP version (nghttpx) or the proxy (squid).
FRONTED = {"http1-nghttpx": ("nghttpx", "1.1"), "http2-nghttpx": ("nghttpx", "2"), "http-proxy": ("squid", None),
           "http2-vs-http1-nghttpx": ("nghttpx", "2")}
# The transports whose second client is mcpc over HTTP/1.1 (BENCH_BASE_HTTP), not the
# floor: HTTP/2 and HTTP/1.1 measured in one run, interleaved, whatever the machine
# does meanwhile.
VERSUS = {"http2-vs-http1-nghttpx": "1.1"}


def find(program):
    # Both are daemons that Debian puts in /usr/sbin, not on every user's PATH.
    return shutil.which(program) or shutil.which(program, path="/usr/sbin:/sbin")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, p, what):
    end = time.monotonic() + 20
    while time.monotonic() < end:
        if p.poll() is not None:
            raise SystemExit(f"{what} exited at start ({p.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            if p.poll() is None:
                return
            # Another program took the port first: this one has exited.
            raise SystemExit(f"{what} exited at start ({p.returncode})")
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{what} did not listen on port {port}")


def start_front(program, backend):
    """nghttpx before bench_server (HTTP/2 and HTTP/1.1 on one port, windows as mcpc's
    own, so that neither side's window is the limit), or squid as a forward proxy."""
    port = free_port()
    tmp = tempfile.mkdtemp(prefix="mcpc-bench-")
    if program == "nghttpx":
        args = [find("nghttpx"), "--conf=/dev/null", "--single-process", f"--frontend=127.0.0.1,{port};no-tls",
                f"--backend=127.0.0.1,{backend}", "--workers=1", "--backend-connections-per-host=256",
                "--no-via", "--no-server-rewrite", "--no-location-rewrite", "--no-ocsp",
                f"--errorlog-file={tmp}/error.log", "--frontend-http2-window-size=8388608",
                "--frontend-http2-connection-window-size=33554432"]
    else:
        conf = os.path.join(tmp, "squid.conf")
        with open(conf, "w") as f:
            f.write(f"""http_port 127.0.0.1:{port}
acl bench src 127.0.0.1
http_access allow bench
http_access deny all
cache deny all
cache_mem 0 MB
access_log none
cache_log {tmp}/cache.log
cache_store_log none
pid_filename none
shutdown_lifetime 0 seconds
via off
forwarded_for delete
""")
        args = [find("squid"), "-N", "-f", conf]
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, p, program)
    except BaseException:
        stop_front((p, port, tmp))
        raise
    return p, port, tmp


def stop_front(front):
    p, _, tmp = front
    p.terminate()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    shutil.rmtree(tmp, ignore_errors=True)


def run_one(bench, server, transport, mode, client, env, timeout):
    srv = front = None
    if transport == "stdio-1cpu":
        # Client, server and all their threads on one CPU: no cross-CPU wake-ups,
        # whose cost on a virtual machine depends on the host (see README.md).
        args = ["taskset", "-c", "0", bench, "stdio", f"{server} stdio"]
    elif transport == "stdio-2cpu":
        # Every request and response wakes the other CPU.
        args = ["taskset", "-c", "0", bench, "stdio", f"taskset -c 1 {server} stdio"]
    elif transport == "stdio":
        args = [bench, "stdio", f"{server} stdio"]
    elif transport in FRONTED:
        program, version = FRONTED[transport]
        srv, port = start_http_server(server, False, [])
        try:
            front = start_front(program, port)
        except BaseException:
            stop_http_server(srv)
            raise
        env = dict(env)
        if version:
            env["BENCH_MCPC_HTTP"] = version
            port = front[1]
            if transport in VERSUS:
                env["BENCH_BASE_HTTP"] = VERSUS[transport]
        else:
            env["BENCH_PROXY"] = f"127.0.0.1:{front[1]}"
        args = [bench, "http", f"http://127.0.0.1:{port}/mcp"]
    else:
        pin = ["taskset", "-c", "0"] if transport == "http-json-1cpu" else []
        srv, port = start_http_server(server, transport == "http-sse", pin)
        args = pin + [bench, "http", f"http://127.0.0.1:{port}/mcp"]
    args += ["--label", transport, "--mode", mode, "--client", client]
    t0 = time.monotonic()
    try:
        r = subprocess.run(args, env=env, stdout=subprocess.PIPE, timeout=timeout, text=True)
    finally:
        if front:
            stop_front(front)
        if srv:
            stop_http_server(srv)
    took = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit(f"FAILED: {' '.join(args)} (exit {r.returncode})")
    lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    floor = "base" if transport in VERSUS else "raw"
    want = {"both": {"mcpc", floor}}.get(client, {client})
    if mode == "std":
        if {l["client"] for l in lines} != want or len(lines) != len(want):
            raise SystemExit(f"FAILED: {transport}: expected one line per client, got {r.stdout!r}")
        for l in lines:
            missing = [k for k in STD_KEYS if k not in l]
            if missing:
                raise SystemExit(f"FAILED: {transport}: keys missing: {missing}")
            if l["w1_n"] != int(env.get("BENCH_W1_N", "5000")):
                raise SystemExit(f"FAILED: {transport}: w1_n {l['w1_n']}")
    elif not lines:
        raise SystemExit(f"FAILED: {transport} {mode}: no output")
    first = f", {env['BENCH_FIRST']} first" if "BENCH_FIRST" in env else ""
    print(f"# {transport} {mode}{first}: {took:.1f} s", file=sys.stderr)
    return lines


def median_rows(runs):
    """One row per client over repeated runs: each figure is the median of its runs
    (texts are the first run's), so one unlucky run on a shared machine moves nothing."""
    by_client = {}
    for lines in runs:
        for l in lines:
            by_client.setdefault(l["client"], []).append(l)
    out = []
    for group in by_client.values():
        row = dict(group[0])
        for k, v in group[0].items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                row[k] = statistics.median(g[k] for g in group)
        row["runs"] = len(group)
        out.append(row)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bench")
    ap.add_argument("--quick", action="store_true", help="small sizes (CI smoke test), curves too")
    ap.add_argument("--curves", action="store_true", help="the growth curves instead of W1..W6")
    ap.add_argument("--out", default=None)
    ap.add_argument("--transports", default="stdio,stdio-1cpu,stdio-2cpu,http-json,http-json-1cpu,http-sse,"
                                            "http1-nghttpx,http2-nghttpx,http2-vs-http1-nghttpx,http-proxy")
    ap.add_argument("--client", default="both", choices=["both", "mcpc", "raw"])
    ap.add_argument("--repeat", type=int, default=1,
                    help="W1..W6 runs per transport, the clients' start order taking turns; figures are their medians")
    a = ap.parse_args()
    bench = os.path.join(a.bin, "mcpc_bench")
    server = os.path.join(a.bin, "bench_server")
    env = dict(os.environ)
    if a.quick:
        for k, v in QUICK.items():
            env.setdefault(k, v)
    modes = ["std"]
    if a.curves:
        modes = ["inflight", "clients", "sizes"]
    elif a.quick:
        modes = ["std", "inflight", "clients", "sizes"]
    timeout = 120 if a.quick else 3600
    head = machine()
    print(f"# {head}", file=sys.stderr)
    t0 = time.monotonic()
    rows = []
    for t in a.transports.split(","):
        if t not in ("stdio", "stdio-1cpu", "stdio-2cpu", "http-json", "http-json-1cpu", "http-sse", *FRONTED):
            raise SystemExit(f"unknown transport {t}")
        if t in FRONTED and not find(FRONTED[t][0]):
            print(f"# {t} skipped: needs {FRONTED[t][0]}", file=sys.stderr)
            continue
        pinned = t in ("stdio-1cpu", "stdio-2cpu", "http-json-1cpu")
        if pinned and ((os.cpu_count() or 1) < 2 or not shutil.which("taskset")):
            print(f"# {t} skipped: needs taskset and two CPUs", file=sys.stderr)
            continue
        for m in modes:
            if (pinned or t in VERSUS) and m != "std":
                continue
            if m == "std" and a.repeat > 1:
                # Which client's process starts first is not neutral (see kids_start in
                # mcpc_bench.c): the repeats take turns, the floor's first in every other.
                turns = [dict(env, BENCH_FIRST="raw" if i % 2 else "mcpc") for i in range(a.repeat)]
                rows += median_rows([run_one(bench, server, t, m, a.client, e, timeout) for e in turns])
            else:
                rows += run_one(bench, server, t, m, a.client, env, timeout)
    if a.out:
        os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
        with open(a.out, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    runs = f"the median of {a.repeat} runs per transport" if a.repeat > 1 else "one run per transport"
    print(f"Measured {head}; mcpc and the raw floor interleaved, {runs}.\n")
    print(report.render(rows))
    print(f"# all runs passed their checks in {time.monotonic() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
