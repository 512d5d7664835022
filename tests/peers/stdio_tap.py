#!/usr/bin/env python3
"""stdio_tap.py LOG -- CMD ARGS...: runs a stdio MCP server, passing its stdin and
stdout through, and appends every line of either to LOG as
"SECONDS C> LINE" (client to server) or "SECONDS S> LINE" (server to client), the
seconds counted from the tap's start. Its stderr goes through untouched.

When the client closes stdin, the server's stdin is closed too, and a server still
running 0.5 s later gets SIGTERM (server-everything, once a task exists, does not
exit on stdin EOF). The tap exits with the server. The standard library only."""
import os
import signal
import subprocess
import sys
import threading
import time

sep = sys.argv.index("--")
log = open(sys.argv[1], "a", buffering=1)
child = subprocess.Popen(sys.argv[sep + 1 :], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
t0 = time.monotonic()
lock = threading.Lock()


def write_all(f, data):
    view = memoryview(data)
    while view:
        view = view[f.write(view) :]


def note(tag, line):
    with lock:
        log.write(f"{time.monotonic() - t0:.3f} {tag} {line.decode('utf-8', 'replace').rstrip()}\n")


def upstream():
    src = open(0, "rb", buffering=0, closefd=False)
    try:
        for line in iter(src.readline, b""):
            note("C>", line)
            write_all(child.stdin, line)
    except (BrokenPipeError, OSError):
        pass
    try:
        child.stdin.close()
    except OSError:
        pass
    time.sleep(0.5)
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)


threading.Thread(target=upstream, daemon=True).start()
signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
out = open(1, "wb", buffering=0, closefd=False)
for line in iter(child.stdout.readline, b""):
    note("S>", line)
    try:
        write_all(out, line)
    except OSError:
        break
code = child.wait()
os._exit(code if code >= 0 else 128 - code)
