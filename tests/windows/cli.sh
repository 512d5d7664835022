#!/bin/bash
# The mcpc command line on Windows, run under Wine against tests/windows/fake_server.exe
# over stdio: output, exit codes, and Ctrl-C cancelling the call in flight.
#   tests/windows/cli.sh DIR   (DIR holds mcpc.exe, its DLL, fake_server.exe and the
#                               ProcessPrng shim: make test-windows puts them there)
# WINE (the loader) and WINEPREFIX come from the environment. Closing line:
# "N passed, N failed, N skipped".
set -u
dir=$(cd "${1:?usage: cli.sh DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
WINE=${WINE:-/usr/lib/wine/wine64}
export WINEDEBUG=-all WINEPREFIX=${WINEPREFIX:?set WINEPREFIX}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
skipped=0
# The server's Windows path (Wine maps / to Z:), single-quoted for --stdio's word
# splitting, which takes a backslash as an escape elsewhere.
win_dir="Z:${dir//\//\\}"
SERVER="'$win_dir\\fake_server.exe'"

mcpc() { (cd "$dir" && "$WINE" mcpc.exe "$@"); }

# expect NAME WANT_EXIT GREP_STDOUT -- ARGS...   (GREP_STDOUT "" skips the output check)
# Standard input is $INPUT (empty unless set).
expect() {
    local name=$1 want=$2 pattern=$3
    shift 4
    printf '%s' "${INPUT:-}" | mcpc "$@" >"$tmp/out" 2>"$tmp/err"
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

expect info 0 '"name":"fake_server"' -- --stdio "$SERVER" info
expect tools 0 '"name":"echo"' -- --stdio "$SERVER" tools
expect call-text 0 '"text":"hi"' -- --stdio "$SERVER" call echo '{"text":"hi"}'
expect tool-error 2 '"isError":true' -- --stdio "$SERVER" call fail
expect rpc-error 3 '' -- --stdio "$SERVER" call nope '{}'
expect timeout 4 '' -- --timeout 300 --stdio "$SERVER" call slow '{"ms":20000}'
expect bad-arguments-json 1 '' -- --stdio "$SERVER" call echo 'not json'
expect bad-arguments-array 1 '' -- --stdio "$SERVER" call echo '[1]'
expect unknown-option 1 '' -- --frobnicate --stdio "$SERVER" tools
expect no-server 1 '' -- tools
expect spawn-failure 3 '' -- --stdio "no_such_server.exe" tools
expect quoted-words 0 '"text":"a b"' -- --stdio "$SERVER 'a b' \"c d\"" call argv
expect help 0 '' -- --help
# Non-ASCII arguments arrive as UTF-8: mcpc.exe's manifest sets the process code page.
expect utf8-argument 0 '"text":"héllo €"' -- --stdio "$SERVER" call echo '{"text":"héllo €"}'

# --elicit reads answers from stdin in text mode: a line ending in CRLF gives the
# same answer as on Linux; the end of input cancels.
INPUT=$'Ada\r\n' expect elicit-answer 0 '\"content\":{\"name\":\"Ada\"}' -- --elicit --stdio "$SERVER" call ask
INPUT='' expect elicit-end-of-input 0 '\"action\":\"cancel\"' -- --elicit --stdio "$SERVER" call ask

# The same on a console (a terminal under Wine): the answer is read with ReadConsoleW.
# ASCII only: Wine's console loses other characters typed on a Unix terminal.
(cd "$dir" && python3 "$here/console.py" 'name>' 'Ada Lovelace' -- "$WINE" mcpc.exe --elicit \
    --stdio "$SERVER" call ask) >"$tmp/out" 2>&1
got=$?
if [ "$got" -eq 0 ] && tr -d '\r\n' <"$tmp/out" | grep -qF '\"content\":{\"name\":\"Ada Lovelace\"}'; then
    echo "ok   elicit-console"
    passed=$((passed + 1))
else
    echo "FAIL elicit-console: exit $got: $(tail -c 400 "$tmp/out")"
    failed=$((failed + 1))
fi

# stdout is one JSON document and "\n", the same bytes as on Linux (no "\r\n").
mcpc --stdio "$SERVER" call echo '{"text":"bytes"}' >"$tmp/out" 2>/dev/null
if [ "$(tail -c 2 "$tmp/out" | od -An -c | tr -d ' ')" = '}\n' ] && ! grep -q $'\r' "$tmp/out"; then
    echo "ok   stdout-newline"
    passed=$((passed + 1))
else
    echo "FAIL stdout-newline: $(od -c "$tmp/out" | tail -3)"
    failed=$((failed + 1))
fi

# Streamable HTTP on 127.0.0.1: the fake server in HTTP mode, its port in a file.
rm -f "$dir/http.port"
(cd "$dir" && exec "$WINE" fake_server.exe --http=http.port) >/dev/null 2>&1 &
http_pid=$!
for _ in $(seq 1 200); do
    [ -s "$dir/http.port" ] && break
    sleep 0.05
done
port=$(tr -d '\r\n' <"$dir/http.port" 2>/dev/null)
URL="http://127.0.0.1:${port:-1}/mcp"
expect http-tools 0 '"name":"echo"' -- --proxy none --url "$URL" tools
expect http-call 0 '"text":"over HTTP"' -- --proxy none --url "$URL" call echo '{"text":"over HTTP"}'
expect http-tool-error 2 '"isError":true' -- --proxy none --url "$URL" call fail
# The credential store: a file in a folder that does not exist, one that is not a
# store, and one that is (CRLF line ends, as a Windows editor leaves them).
printf 'not json' >"$dir/bad-store.json"
printf '{\r\n  "k": "v"\r\n}\r\n' >"$dir/store.json"
expect store-no-dir 1 '' -- --oauth --oauth-store 'Z:\no\such\dir\store.json' --url "$URL" info
expect store-bad 1 '' -- --oauth --oauth-store "$win_dir\\bad-store.json" --url "$URL" info
expect store-read 0 '"name":"fake_server"' -- --oauth --headless --oauth-store "$win_dir\\store.json" \
    --proxy none --url "$URL" info
kill "$http_pid" 2>/dev/null
wait "$http_pid" 2>/dev/null

# Ctrl-C cancels the call in flight: exit 5. Wine turns a SIGINT of the process into
# CTRL_C_EVENT for its console control handlers, which is what Ctrl-C in a console does.
rm -f "$dir/ctrl-c.log"
(cd "$dir" && exec "$WINE" mcpc.exe --stdio "$SERVER --log=ctrl-c.log" call slow '{"ms":20000}') \
    >"$tmp/out" 2>"$tmp/err" &
pid=$!
# The server notes each request as it gets it: the call is in flight once it is there.
for _ in $(seq 1 400); do
    grep -q 'tools/call' "$dir/ctrl-c.log" 2>/dev/null && break
    sleep 0.05
done
kill -INT "$pid" 2>/dev/null
start=$(date +%s)
wait "$pid"
got=$?
took=$(($(date +%s) - start))
# The server is told (notifications/cancelled) before it is closed.
for _ in $(seq 1 100); do
    grep -q 'notifications/cancelled' "$dir/ctrl-c.log" 2>/dev/null && break
    sleep 0.05
done
if [ "$got" -eq 5 ] && grep -q 'MCPC_ERR_CANCELLED' "$tmp/err" && [ "$took" -lt 10 ] &&
    grep -q 'notifications/cancelled' "$dir/ctrl-c.log"; then
    echo "ok   ctrl-c-cancels"
    passed=$((passed + 1))
elif [ "$got" -ne 5 ] && [ "$got" -gt 128 ]; then
    echo "skip ctrl-c-cancels: Wine ended the process on SIGINT (exit $got) instead of calling the console control handler"
    skipped=$((skipped + 1))
else
    echo "FAIL ctrl-c-cancels: exit $got, want 5, in ${took}s; stderr: $(head -c 400 "$tmp/err"); server log: $(cat "$dir/ctrl-c.log" 2>/dev/null)"
    failed=$((failed + 1))
fi

# Ctrl-C while connecting (which cannot be cancelled) is reported by its name once
# the connect ends, and mcpc exits 5.
rm -f "$dir/ctrl-c-connect.pid"
(cd "$dir" && exec "$WINE" mcpc.exe --timeout 2000 --stdio "$SERVER --pid-file=ctrl-c-connect.pid --sleep=20000" tools) \
    >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 1 200); do
    [ -s "$dir/ctrl-c-connect.pid" ] && break
    sleep 0.05
done
kill -INT "$pid" 2>/dev/null
wait "$pid"
got=$?
if [ "$got" -eq 5 ] && grep -q 'interrupted by Ctrl-C while connecting' "$tmp/err"; then
    echo "ok   ctrl-c-while-connecting"
    passed=$((passed + 1))
else
    echo "FAIL ctrl-c-while-connecting: exit $got, want 5; stderr: $(head -c 400 "$tmp/err")"
    failed=$((failed + 1))
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
