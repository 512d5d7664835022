#!/bin/bash
# Happy eyeballs (RFC 8305) through the CLI, in a network namespace this script makes
# for itself (unshare -rnm: its own loopback, and its own /etc/hosts bind-mounted so
# that "localhost" is ::1 and 127.0.0.1). [::1]:P never answers (its accept queue is
# full, so the kernel drops each SYN); the HTTP fixture listens on 127.0.0.1:P. A call
# to http://localhost:P/mcp must go through IPv4 after IPv6's head start, well within
# the timeout. No packet leaves the namespace.
#   MCPC=build/debug/mcpc PYTHON=python3 tests/happy_eyeballs.sh
set -u
MCPC=${MCPC:-build/debug/mcpc}
PYTHON=${PYTHON:-python3}
if [ "${1:-}" != "--inside" ]; then
    exec unshare -rnm "$0" --inside
fi
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
printf '::1 localhost\n127.0.0.1 localhost\n' >"$tmp/hosts"
mount --bind "$tmp/hosts" /etc/hosts || { echo "FAIL cannot mount a private /etc/hosts"; echo "0 passed, 1 failed"; exit 1; }
ip link set lo up
exec 3< <(exec "$PYTHON" -c '
import socket, time
s = socket.socket(socket.AF_INET6)
s.bind(("::1", 0))
s.listen(0)
held = socket.create_connection(s.getsockname()[:2])
print(s.getsockname()[1], flush=True)
time.sleep(120)')
read -r port <&3
coproc FX { exec "$PYTHON" tests/fixtures/http_server.py --port "$port"; }
read -r _ _ <&"${FX[0]}"
passed=0
failed=0
t0=$(date +%s%N)
out=$("$MCPC" --timeout 5000 --url "http://localhost:$port/mcp" call echo '{"text":"eyeballs"}' 2>&1)
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ $rc -eq 0 ] && [[ $out == *'"text":"eyeballs"'* ]] && [ $ms -lt 4000 ]; then
    echo "ok   a silent IPv6 address gives way to IPv4 (${ms} ms)"
    passed=$((passed + 1))
else
    echo "FAIL a silent IPv6 address: exit $rc after ${ms} ms: $out"
    failed=$((failed + 1))
fi
# Every address silent: the connect timeout bounds the whole (a transport error when
# the connection is what timed out, a timeout when the request did).
t0=$(date +%s%N)
out=$("$MCPC" --timeout 1500 --url "http://[::1]:$port/mcp" info 2>&1)
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if { [ $rc -eq 3 ] || [ $rc -eq 4 ]; } && [ $ms -lt 3500 ]; then
    echo "ok   no address answers: a timeout within the bound (${ms} ms)"
    passed=$((passed + 1))
else
    echo "FAIL no address answers: exit $rc after ${ms} ms: $out"
    failed=$((failed + 1))
fi
eval "exec ${FX[1]}>&-"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
