#!/usr/bin/env python3
"""mcpc next to the reference tasks client, on the same servers and the same tasks:
the mcpc CLI and ext-tasks 0.2.2 (tasks_client.mjs) each run a task, at the same
time, and what each sent is read from a wire tap:

  - FastMCP + fastmcp-tasks over HTTP (the tasks extension of 2026-07-28):
    slow_report for 2 s at pollIntervalMs 500, and ask_color (one input request);
    the server's request log (tasks_server.py --log) gives each request's time;
  - server-everything over stdio (the tasks of 2025-11-25): simulate-research-query
    (four stages of 1 s, pollInterval 1000, a status notification at each stage);
    stdio_tap.py between each client and its server gives every line's time.

Checked: the same result text, the same statuses, the same count of tasks/get
(within one) at the same interval, one tasks/update for one input request. Where
mcpc is known to differ (KNOWN), the check is reported as "known" and counted as
skipped, not failed: ext-tasks' own count there depends on how its poll timer and
the server's notifications fall, so no fixed bound tells a fix from luck. Prints
what it measured, and closes with "tasks-compare: N passed, N failed, N skipped".

Environment: MCPC (the CLI; default build/debug/mcpc), and from peers.env
MCPC_PEERS_NODE, MCPC_PEERS_EVERYTHING, MCPC_PEERS_FASTMCP_PY, MCPC_PEERS_TASKS_CLIENT.
Run from the top of the tree. The standard library only."""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MCPC = os.environ.get("MCPC") or "build/debug/mcpc"
EXT = "io.modelcontextprotocol/tasks"

# Where mcpc differs from the reference client, by check, with how.
KNOWN = {
    "everything-polls": "mcpc sends tasks/get at every notifications/tasks/status (and once more when a "
    "notification and its poll timer meet); ext-tasks takes a notification as the task's state and polls "
    "only when none came within pollInterval",
}

passed = failed = skipped = 0


def check(name, ok, detail):
    global passed, failed, skipped
    if ok:
        passed += 1
        print(f"PASS {name}: {detail}", flush=True)
    elif name in KNOWN:
        skipped += 1
        print(f"known {name}: {detail}\n  ({KNOWN[name]})", flush=True)
    else:
        failed += 1
        print(f"FAIL {name}: {detail}", flush=True)


def env(name):
    v = os.environ.get(name)
    if not v:
        sys.exit(f"tasks_compare.py: {name} is not set: source the peers.env of tests/peers/install.sh")
    return v


def start(argv, **kw):
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def finish(p, what, timeout=60):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        print(f"  {what}: no end within {timeout} s", flush=True)
    if p.returncode != 0:
        print(f"  {what}: exit {p.returncode}\n  stdout: {out[-800:]}\n  stderr: {err[-800:]}", flush=True)
    return out, err


def ref_step(out, step):
    """The JSON line of the reference client's step."""
    for line in out.splitlines():
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("step") == step:
                return o
    return {}


def mcpc_text(out):
    try:
        return json.loads(out)["content"][0]["text"]
    except (ValueError, KeyError, IndexError):
        return None


def mcpc_statuses(err):
    seen = []
    for s in re.findall(r"^mcpc: task (\w+)", err, re.M):
        if not seen or seen[-1] != s:
            seen.append(s)
    return seen


def polls(times):
    """Count, median interval (ms) of request times (s)."""
    gaps = [round((b - a) * 1000) for a, b in zip(times, times[1:])]
    return len(times), (statistics.median(gaps) if gaps else None)


def describe(who, times, start_t):
    n, gap = polls(times)
    gap = "-" if gap is None else f"{gap:.0f}"
    last = f", last {1000 * (times[-1] - start_t):.0f} ms after tools/call" if times else ""
    return f"{who} {n} tasks/get, every {gap} ms{last}"


# ---- FastMCP over HTTP: the tasks extension --------------------------------


def fastmcp(tmp, node, client):
    log = os.path.join(tmp, "fastmcp.log")
    server = subprocess.Popen(
        [env("MCPC_PEERS_FASTMCP_PY"), os.path.join(HERE, "tasks_server.py"), "--port", "0", "--log", log],
        stdout=subprocess.PIPE, stderr=open(os.path.join(tmp, "fastmcp.err"), "w"), text=True,
    )
    try:
        line = server.stdout.readline()
        if not line.startswith("PORT "):
            check("fastmcp-start", False, f"the server printed {line!r}")
            return
        url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"
        args = json.dumps({"topic": "compare", "seconds": 2})
        # Both clients at once; connections wait in the backlog until the server serves.
        ref = start([node, client, "--url", url, "--modern", "follow", "slow_report", args, "input", "ask_color", "{}"])
        ours = start([MCPC, "--url", url, "--extension", EXT, "call", "slow_report", args])
        ref_out, _ = finish(ref, "ext-tasks")
        our_out, our_err = finish(ours, "mcpc")
        asked = start([MCPC, "--url", url, "--extension", EXT, "--elicit-json", "call", "ask_color", "{}"],
                      stdin=subprocess.PIPE)
        ask_out, ask_err = asked.communicate('{"colour":"yes"}\n', timeout=30)
    finally:
        server.terminate()
        server.wait()
    reqs = [json.loads(line) for line in open(log)]
    follow, inp = ref_step(ref_out, "follow"), ref_step(ref_out, "input")
    ref_task = follow.get("taskId")
    calls = {r["task"] for r in reqs if r["task"]}
    # mcpc's tasks: the other slow_report task, and the other ask_color task.
    called = [r for r in reqs if r["rpc"] == "tools/call"]
    by_task = {}
    for r in reqs:
        if r["task"]:
            by_task.setdefault(r["task"], []).append(r)
    slow = [t for t in calls if t not in (ref_task, inp.get("taskId"))]
    our_task = next((t for t in slow if not any(r["rpc"] == "tasks/update" for r in by_task[t])), None)
    our_ask = next((t for t in slow if any(r["rpc"] == "tasks/update" for r in by_task[t])), None)

    def gets(task):
        return [r["t"] for r in by_task.get(task, []) if r["rpc"] == "tasks/get"]

    def created(reference):  # when the client sent its tools/call slow_report (ext-tasks' ids start at 1001)
        return next((r["t"] for r in called if r["mcp_name"] == "slow_report" and (r["id"] > 1000) == reference), 0)

    if not ref_task or not our_task:
        check("fastmcp-follow", False, f"tasks not found (ext-tasks {ref_task}, mcpc {our_task}); {ref_out[-400:]}")
        return
    rg, og = gets(ref_task), gets(our_task)
    check("fastmcp-text", follow.get("outcome", {}).get("text") == mcpc_text(our_out) == "report on compare after 2.0s",
          f"ext-tasks {follow.get('outcome', {}).get('text')!r}, mcpc {mcpc_text(our_out)!r}")
    check("fastmcp-statuses", follow.get("statuses") == mcpc_statuses(our_err) == ["working", "completed"],
          f"ext-tasks {follow.get('statuses')}, mcpc {mcpc_statuses(our_err)}")
    (rn, rgap), (on, ogap) = polls(rg), polls(og)
    check("fastmcp-polls", abs(rn - on) <= 1 and rgap and ogap and abs(rgap - ogap) <= 100,
          describe("ext-tasks", rg, created(True)) + "; " + describe("mcpc", og, created(False)))
    # Input: one tasks/update each, the same answer.
    ref_ask = inp.get("taskId")
    updates = [sum(r["rpc"] == "tasks/update" for r in by_task.get(t, [])) for t in (ref_ask, our_ask)]
    texts = (inp.get("outcome", {}).get("text"), mcpc_text(ask_out))
    check("fastmcp-input", updates == [1, 1] and texts[0] == texts[1] == "colour: yes (accept)",
          f"tasks/update: ext-tasks {updates[0]}, mcpc {updates[1]}; tasks/get: ext-tasks {len(gets(ref_ask))}, "
          f"mcpc {len(gets(our_ask)) if our_ask else None}; texts {texts}")


# ---- server-everything over stdio: the tasks of 2025-11-25 -----------------


def tapped(log):
    """(seconds, direction, message) of each JSON line a tap logged."""
    out = []
    for line in open(log):
        t, tag, body = line.rstrip("\n").split(" ", 2)
        try:
            out.append((float(t), tag, json.loads(body)))
        except ValueError:
            pass
    return out


def everything(tmp, node, client):
    ev = env("MCPC_PEERS_EVERYTHING")
    tap = os.path.join(HERE, "stdio_tap.py")
    logs = {who: os.path.join(tmp, f"everything-{who}.tap") for who in ("ref", "mcpc")}
    args = json.dumps({"topic": "compare"}, separators=(",", ":"))

    def server(who):  # the server, behind a tap of its own
        return f"{sys.executable} {tap} {logs[who]} -- {node} {ev} stdio"

    ref = start([node, client, "--stdio", server("ref"), "follow", "simulate-research-query", args])
    ours = start([MCPC, "--stdio", server("mcpc"), "call", "simulate-research-query", args])
    ref_out, _ = finish(ref, "ext-tasks")
    our_out, our_err = finish(ours, "mcpc")
    follow = ref_step(ref_out, "follow")
    ref_text, our_text = follow.get("outcome", {}).get("text"), mcpc_text(our_out)
    check("everything-text", ref_text == our_text and (our_text or "").startswith("# Research Report: compare"),
          f"ext-tasks {(ref_text or '')[:40]!r}..., mcpc {(our_text or '')[:40]!r}... ({len(our_text or '')} chars)")
    check("everything-statuses", follow.get("statuses") == mcpc_statuses(our_err) == ["working", "completed"],
          f"ext-tasks {follow.get('statuses')}, mcpc {mcpc_statuses(our_err)}")
    counts = {}
    for who, log in logs.items():
        lines = tapped(log)

        def sent(method):
            return [t for t, tag, o in lines if tag == "C>" and o.get("method") == method]

        call = sent("tools/call")
        notes = [t for t, tag, o in lines if tag == "S>" and o.get("method") == "notifications/tasks/status"]
        counts[who] = (sent("tasks/get"), call[0] if call else 0, len(notes), len(sent("tasks/result")))
    (rg, rc, rn, rr), (og, oc, on, orr) = counts["ref"], counts["mcpc"]
    check("everything-result-once", rr == orr == 1, f"tasks/result: ext-tasks {rr}, mcpc {orr}")
    # Whatever the difference below, mcpc does not run away: at most a poll for each
    # notification and one for each interval (4 s at 1000 ms, a notification a second).
    check("everything-poll-bound", len(og) <= 2 * on, f"mcpc {len(og)} tasks/get for {on} status notifications")
    check("everything-polls", abs(len(rg) - len(og)) <= 1,
          describe("ext-tasks", rg, rc) + f" ({rn} status notifications); "
          + describe("mcpc", og, oc) + f" ({on} status notifications)")


def main():
    node, client = env("MCPC_PEERS_NODE"), env("MCPC_PEERS_TASKS_CLIENT")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcpc-tasks-compare-") as tmp:
        # The two servers' runs at once: each takes 4-5 s, mostly waiting.
        t = threading.Thread(target=everything, args=(tmp, node, client))
        t.start()
        fastmcp(tmp, node, client)
        t.join()
        if failed:
            keep = tempfile.mkdtemp(prefix="mcpc-tasks-compare-logs-")
            for f in os.listdir(tmp):
                os.replace(os.path.join(tmp, f), os.path.join(keep, f))
            print(f"logs kept in {keep}")
    print(f"took {time.monotonic() - t0:.1f} s")
    print(f"tasks-compare: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
