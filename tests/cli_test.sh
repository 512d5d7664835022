#!/bin/bash
# Tests of the mcpc command-line client against the demo server: output, exit codes,
# and Ctrl-C cancelling the call in flight. Closing line: "N passed, N failed".
set -u
MCPC=${MCPC:-build/debug/mcpc}
PYTHON=${PYTHON:-python3}
SERVER="$PYTHON demo/server.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

# expect NAME WANT_EXIT GREP_STDOUT -- ARGS...   (GREP_STDOUT "" skips the output check)
expect() {
    local name=$1 want=$2 pattern=$3
    shift 4
    "$MCPC" "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL $name: exit $got, want $want; stderr: $(head -c 400 "$tmp/err")"
        failed=$((failed + 1))
    elif [ -n "$pattern" ] && ! grep -qF -- "$pattern" "$tmp/out"; then
        echo "FAIL $name: stdout lacks $pattern: $(head -c 400 "$tmp/out")"
        failed=$((failed + 1))
    else
        echo "ok   $name"
        passed=$((passed + 1))
    fi
}

expect info 0 '"serverInfo":{"name":"mcpc-demo"' -- --stdio "$SERVER" info
expect tools-all-pages 0 '"name":"item_19"' -- --stdio "$SERVER" tools
expect call-text 0 '"text":"hi"' -- --stdio "$SERVER" call echo '{"text":"hi"}'
expect call-structured 0 '"structuredContent":{"sum":5}' -- --stdio "$SERVER" call add '{"a":2,"b":3}'
expect call-no-args 0 '"text":"one"' -- --stdio "$SERVER" call multi
expect tool-error 2 '"isError":true' -- --stdio "$SERVER" call fail '{"message":"boom"}'
expect rpc-error 3 '' -- --stdio "$SERVER" call nope '{}'
expect handshake-error 3 '' -- --stdio "$SERVER --fault bad-version" info
expect repeated-cursor 3 '' -- --stdio "$SERVER --fault repeated-cursor" tools
expect timeout 4 '' -- --timeout 300 --stdio "$SERVER" call slow '{"ms":20000}'
expect pinned-version 0 '"protocolVersion":"2024-11-05"' -- --protocol-version 2024-11-05 --stdio "$SERVER" info
expect quoted-args 0 '"name":"mcpc-demo"' -- --stdio "$PYTHON 'demo/server.py' --page-size \"7\"" info
expect usage-no-transport 1 '' -- info
expect usage-bad-command 1 '' -- --stdio "$SERVER" frobnicate
expect usage-bad-timeout 1 '' -- --timeout abc --stdio "$SERVER" info
expect usage-unterminated-quote 1 '' -- --stdio "$PYTHON 'demo/server.py" info
expect bad-json-args 1 '' -- --stdio "$SERVER" call echo '{"text":'
expect help 0 'Usage' -- --help

# What can be checked is checked before anything starts: the server command (which
# would leave a marker file) never runs, and the usage error comes at once.
marker="$tmp/started"
starts="touch $marker"
expect_nothing_started() {  # NAME ARGS...
    local name=$1 t0 ms
    shift
    rm -f "$marker"
    t0=$(date +%s%N)
    expect "$name" 1 '' -- "$@"
    ms=$((($(date +%s%N) - t0) / 1000000))
    if [ -e "$marker" ] || [ "$ms" -ge 1000 ]; then
        echo "FAIL $name-before-start: marker $([ -e "$marker" ] && echo present || echo absent), ${ms} ms"
        failed=$((failed + 1))
    fi
}
expect_nothing_started args-not-json --stdio "$starts" call echo not-json
expect_nothing_started args-truncated --stdio "$starts" call echo '{"text":'
expect_nothing_started args-not-object --stdio "$starts" call echo '[1,2]'
expect_nothing_started args-string --stdio "$starts" call echo '"x"'
expect_nothing_started bad-protocol-version --protocol-version 1999-01-01 --stdio "$starts" info
expect_nothing_started url-credentials --url "http://user:pw@127.0.0.1:9/mcp" info
expect_nothing_started url-bad-scheme --url "ftp://127.0.0.1/mcp" info
# Input for the server: roots offered with --roots, elicitation answered on stdin with
# --elicit (defaults filled in, a wrong answer asked again), a generic request.
INPUT="$PYTHON tests/fixtures/input_server.py"
for era in modern legacy; do
    expect "roots-$era" 0 'file:///tmp' -- --roots /tmp --stdio "$INPUT --era=$era" call roots
    printf '{"name":5}\n{"name":"Ann"}\n' >"$tmp/answers"
    expect "elicit-$era" 0 '\"age\": 7, \"name\": \"Ann\"' -- --elicit --stdio "$INPUT --era=$era" call form <"$tmp/answers"
    expect "elicit-url-$era" 0 '\"action\": \"decline\"' -- --elicit --stdio "$INPUT --era=$era" call url </dev/null
done
expect no-elicit-modern 0 '\"action\": \"decline\"' -- --stdio "$INPUT --era=modern" call form
expect usage-roots-not-a-dir 1 '' -- --roots /nonexistent --stdio "$SERVER" tools
expect request 0 '"name":"echo"' -- --stdio "$SERVER" request tools/list '{}'
expect request-rpc-error 3 '' -- --stdio "$SERVER" request no/such/method
expect usage-request-no-method 1 '' -- --stdio "$SERVER" request

# Protocol 2026-07-28: chosen with no flag against a server that speaks it, initialize
# against one that does not; info says which and how.
expect modern-info 0 '"mcpc":{"protocolVersion":"2026-07-28","negotiatedBy":"discover"}' -- --stdio "$SERVER --era=modern" info
expect modern-call 0 '"structuredContent":{"sum":5}' -- --stdio "$SERVER --era=modern" call add '{"a":2,"b":3}'
expect modern-tools 0 '"name":"needs_state"' -- --stdio "$SERVER --era=modern" tools
expect modern-rounds 0 '"text":"done after 3 rounds"' -- --stdio "$SERVER --era=modern" call needs_state
expect legacy-info 0 '"mcpc":{"protocolVersion":"2025-11-25","negotiatedBy":"fallback"}' -- --stdio "$SERVER" info
expect forced-legacy 0 '"negotiatedBy":"initialize"' -- --legacy --stdio "$SERVER --era=dual" info
expect forced-legacy-vs-modern 3 '' -- --legacy --stdio "$SERVER --era=modern" info
expect pinned-modern 0 '"negotiatedBy":"pinned"' -- --protocol-version 2026-07-28 --stdio "$SERVER --era=modern" info

# The error message goes to stderr with the library's words.
"$MCPC" --stdio "$SERVER" call nope '{}' >/dev/null 2>"$tmp/err"
if grep -q 'MCPC_ERR_RPC' "$tmp/err" && grep -q 'nope' "$tmp/err"; then
    echo "ok   rpc-error-message"; passed=$((passed + 1))
else
    echo "FAIL rpc-error-message: $(cat "$tmp/err")"; failed=$((failed + 1))
fi

# Ctrl-C cancels the call in flight: the server sees notifications/cancelled, exit 5.
log="$tmp/server.log"
"$MCPC" --stdio "$SERVER --log $log" call slow '{"ms":30000}' >/dev/null 2>"$tmp/err" &
pid=$!
for _ in $(seq 1 1000); do
    grep -q '"name":"slow"' "$log" 2>/dev/null && break
    sleep 0.01
done
kill -INT "$pid"
wait "$pid"
got=$?
for _ in $(seq 1 500); do
    grep -q '"event":"cancelled"' "$log" 2>/dev/null && break
    sleep 0.01
done
if [ "$got" -eq 5 ] && grep -q 'notifications/cancelled' "$log" && grep -q '"event":"cancelled"' "$log"; then
    echo "ok   sigint-cancels"; passed=$((passed + 1))
else
    echo "FAIL sigint-cancels: exit $got; log: $(tail -c 400 "$log")"; failed=$((failed + 1))
fi
if ! pgrep -f "$log" >/dev/null; then
    echo "ok   sigint-no-process-left"; passed=$((passed + 1))
else
    echo "FAIL sigint-no-process-left"; failed=$((failed + 1))
fi

# Over Streamable HTTP, against the loopback fixture.
start_fixture() {  # ARGS... ; sets fixture_pid, fixture_port; stops when its stdin closes
    coproc FIXTURE { exec "$PYTHON" tests/fixtures/http_server.py "$@"; }
    fixture_pid=$FIXTURE_PID
    read -r _ fixture_port <&"${FIXTURE[0]}"
}
stop_fixture() {
    eval "exec ${FIXTURE[1]}>&-"
    wait "$fixture_pid" 2>/dev/null
}

start_fixture --mode sse
url="http://127.0.0.1:$fixture_port/mcp"
expect http-info 0 '"serverInfo":{"name":"mcpc-http-fixture"' -- --url "$url" info
expect http-tools 0 '"name":"item_19"' -- --url "$url" tools
expect http-call 0 '"structuredContent":{"sum":5}' -- --url "$url" call add '{"a":2,"b":3}'
expect http-tool-error 2 '"isError":true' -- --url "$url" call fail '{}'
expect http-timeout 4 '' -- --timeout 300 --url "$url" call slow '{"ms":20000}'
stop_fixture
expect_nothing_started http-insecure-refused --url http://example.com/mcp call echo '{}'

start_fixture --era modern
url="http://127.0.0.1:$fixture_port/mcp"
expect http-modern-info 0 '"negotiatedBy":"discover"' -- --url "$url" info
expect http-modern-headers 0 '"text":"ok"' -- --url "$url" call header_tool '{"region":"eu","priority":3}'
stop_fixture

start_fixture --fault auth
url="http://127.0.0.1:$fixture_port/mcp"
expect http-no-token 3 '' -- --url "$url" info
expect http-bearer 0 '"protocolVersion"' -- --bearer good-token --url "$url" info
expect http-header 0 '"protocolVersion"' -- --header "Authorization: Bearer good-token" --url "$url" info
stop_fixture

certs=$(mktemp -d)
if sh tests/fixtures/make_certs.sh "$certs" >/dev/null 2>&1; then
    start_fixture --tls "$certs/server.pem" "$certs/server.key"
    url="https://127.0.0.1:$fixture_port/mcp"
    expect https-untrusted 3 '' -- --url "$url" info
    expect https-cacert 0 '"text":"tls"' -- --cacert "$certs/ca.pem" --url "$url" call echo '{"text":"tls"}'
    stop_fixture
else
    echo "FAIL make_certs.sh"; failed=$((failed + 1))
fi
rm -rf "$certs"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
