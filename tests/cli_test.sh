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
# --extension declares extensions in both generations; info shows the server's.
expect info-extensions 0 '"extensions":{"dev.mcpc/demo":' -- --stdio "$SERVER" info
for era in legacy modern; do
    "$MCPC" --extension io.modelcontextprotocol/tasks --extension 'dev.example/x={"a":[3]}' \
        --stdio "$SERVER --era=$era --log $tmp/ext-$era.log" call echo '{"text":"x"}' >/dev/null 2>"$tmp/err"
    if grep -qF '"extensions":{"io.modelcontextprotocol/tasks":{},"dev.example/x":{"a":[3]}}' "$tmp/ext-$era.log"; then
        echo "ok   extension-declared-$era"
        passed=$((passed + 1))
    else
        echo "FAIL extension-declared-$era: $(head -c 400 "$tmp/err")"
        failed=$((failed + 1))
    fi
done
expect extension-not-an-object 1 '' -- --extension 'dev.example/x=[1]' --stdio "$SERVER" tools
expect extension-bad-id 1 '' -- --extension 'no-slash' --stdio "$SERVER" tools
# Skills: the listing, a skill's SKILL.md and another file, printed only once verified.
expect skills-list 0 '"uri":"skill://demo-greeting/SKILL.md"' -- --stdio "$SERVER" skills
expect skill-md 0 'name: demo-greeting' -- --stdio "$SERVER --era=modern" skill demo-greeting
expect skill-file 0 'Grace' -- --stdio "$SERVER" skill demo-greeting references/names.md
expect skill-bad-digest 3 '' -- --stdio "$SERVER --fault skill-bad-digest" skill demo-greeting
expect skill-bad-frontmatter 3 '' -- --stdio "$SERVER --fault skill-bad-frontmatter" skill demo-greeting
expect skill-unlisted-file 3 '' -- --stdio "$SERVER" skill demo-greeting scripts/run.sh
expect skill-unknown 3 '' -- --stdio "$SERVER" skill nope
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
expect help-short 0 'Usage' -- -h
expect version 0 'mcpc ' -- -V

# The committed man page is the one the CLI makes from its option table (make man).
"$MCPC" --man >"$tmp/mcpc.1"
if [ $? -eq 0 ] && cmp -s "$tmp/mcpc.1" cli/mcpc.1; then
    echo "ok   man-page-current"; passed=$((passed + 1))
else
    echo "FAIL man-page-current: cli/mcpc.1 is not what '$MCPC --man' prints; run make man"
    diff cli/mcpc.1 "$tmp/mcpc.1" | head -20
    failed=$((failed + 1))
fi
# Where groff is installed, the page must format without a warning.
if command -v groff >/dev/null; then
    if groff -man -Tutf8 -ww -z cli/mcpc.1 2>"$tmp/groff" && [ ! -s "$tmp/groff" ]; then
        echo "ok   man-page-formats"; passed=$((passed + 1))
    else
        echo "FAIL man-page-formats: $(head -c 600 "$tmp/groff")"; failed=$((failed + 1))
    fi
fi
# No file of cli/ over 700 lines: one file a job.
for f in cli/*; do
    if [ "$(wc -l <"$f")" -gt 700 ]; then
        echo "FAIL cli-file-size: $f has $(wc -l <"$f") lines (at most 700)"; failed=$((failed + 1))
    fi
done

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
# stderr_has NAME TEXT: the last run's stderr holds TEXT.
stderr_has() {
    if grep -qF -- "$2" "$tmp/err"; then
        echo "ok   $1"; passed=$((passed + 1))
    else
        echo "FAIL $1: stderr lacks $2: $(head -c 600 "$tmp/err")"; failed=$((failed + 1))
    fi
}
# stderr_lacks NAME TEXT: the last run's stderr does not hold TEXT.
stderr_lacks() {
    if grep -qF -- "$2" "$tmp/err"; then
        echo "FAIL $1: stderr has $2: $(head -c 600 "$tmp/err")"; failed=$((failed + 1))
    else
        echo "ok   $1"; passed=$((passed + 1))
    fi
}
# Input for the server: roots offered with --roots, elicitation answered on stdin with
# --elicit field by field (defaults filled in, a wrong value asked again, choices by
# number, value or title, decline and cancel) and with --elicit-json, a generic request.
INPUT="$PYTHON tests/fixtures/input_server.py"
SURVEY_ANSWERS='maybe\ny\nnope\na@b.c\nHigh\n11\n9.5\n2\na,d\n1, c\n'
SURVEY_CONTENT='\"action\": \"accept\", \"content\": {\"agree\": true, \"email\": \"a@b.c\", \"level\": \"hi\", \"score\": 9.5, \"size\": \"l\", \"tags\": [\"a\", \"c\"]}'
for era in modern legacy; do
    expect "roots-$era" 0 'file:///tmp' -- --roots /tmp --stdio "$INPUT --era=$era" call roots
    printf '\n\n\nAnn\n' >"$tmp/answers"
    expect "elicit-$era" 0 '\"age\": 7, \"name\": \"Ann\"' -- --elicit --stdio "$INPUT --era=$era" call form <"$tmp/answers"
    stderr_has "elicit-required-$era" 'this field is required and has no default'
    printf "$SURVEY_ANSWERS" >"$tmp/answers"
    expect "elicit-fields-$era" 0 "$SURVEY_CONTENT" -- --elicit --stdio "$INPUT --era=$era" call survey <"$tmp/answers"
    stderr_has "elicit-shown-$era" 'E-mail [email] (text, format email, required)'
    stderr_has "elicit-choices-$era" '1) Small [s]'
    for bad in 'answer y or n' 'not of the asked format' 'outside the allowed range' 'not a list of the choices'; do
        stderr_has "elicit-asked-again-$era" "$bad"
    done
    printf '!x\n!decline\n' >"$tmp/answers"
    expect "elicit-decline-$era" 0 '\"action\": \"decline\"' -- --elicit --stdio "$INPUT --era=$era" call form <"$tmp/answers"
    stderr_has "elicit-unknown-command-$era" 'unknown command'
    printf '5\n!cancel\n' >"$tmp/answers"
    expect "elicit-cancel-$era" 0 '\"action\": \"cancel\"' -- --elicit --stdio "$INPUT --era=$era" call form <"$tmp/answers"
    # With --config alone, the question names the server as the file does.
    printf '{"mcpServers": {"asker": {"command": "%s", "args": ["tests/fixtures/input_server.py", "--era=%s"]}}}' \
        "$PYTHON" "$era" >"$tmp/asker.json"
    printf '\n\n\nAnn\n' >"$tmp/answers"
    expect "host-elicit-$era" 0 '\"name\": \"Ann\"' -- --elicit --config "$tmp/asker.json" call asker__form <"$tmp/answers"
    stderr_has "host-elicit-names-the-server-$era" 'mcpc: server asker ('
    expect "elicit-eof-$era" 0 '\"action\": \"cancel\"' -- --elicit --stdio "$INPUT --era=$era" call survey </dev/null
    printf '\n\n!!x\n' >"$tmp/answers"
    expect "elicit-bang-$era" 0 '\"name\": \"!x\"' -- --elicit --stdio "$INPUT --era=$era" call form <"$tmp/answers"
    printf '{"name":5}\n{"name":"Ann"}\n' >"$tmp/answers"
    expect "elicit-json-$era" 0 '\"age\": 7, \"name\": \"Ann\"' -- --elicit-json --stdio "$INPUT --era=$era" call form <"$tmp/answers"
    expect "elicit-url-eof-$era" 0 '\"action\": \"cancel\"' -- --elicit --stdio "$INPUT --era=$era" call url </dev/null
    stderr_has "elicit-url-shown-$era" 'https://example.com/consent'
    echo n >"$tmp/answers"
    expect "elicit-url-no-$era" 0 '\"action\": \"decline\"' -- --elicit --stdio "$INPUT --era=$era" call url <"$tmp/answers"
    echo y >"$tmp/answers"
    expect "elicit-url-consent-$era" 0 '\"action\": \"accept\"' -- --elicit --stdio "$INPUT --era=$era" call url <"$tmp/answers"
done
expect no-elicit-modern 0 '\"action\": \"decline\"' -- --stdio "$INPUT --era=modern" call form
expect usage-roots-not-a-dir 1 '' -- --roots /nonexistent --stdio "$SERVER" tools
# A roots request that comes while mcpc closes can no longer be answered: no error line.
expect roots-while-closing 0 '"name":"echo"' -- --roots /tmp --stdio "$SERVER --fault roots-on-close" tools
stderr_lacks roots-while-closing-quiet 'mcpc: roots'
expect request 0 '"name":"echo"' -- --stdio "$SERVER" request tools/list '{}'
expect request-rpc-error 3 '' -- --stdio "$SERVER" request no/such/method
expect usage-request-no-method 1 '' -- --stdio "$SERVER" request
# Resources, prompts and completions, in both generations.
for era in modern legacy; do
    expect "resources-$era" 0 '"uri": "res://2"' -- --stdio "$INPUT --era=$era" resources
    expect "templates-loop-$era" 3 '' -- --stdio "$INPUT --era=$era" templates
    expect "prompts-duplicate-$era" 3 '' -- --stdio "$INPUT --era=$era" prompts
    expect "read-$era" 0 '"text": "one"' -- --stdio "$INPUT --era=$era" read res://1
    expect "read-blob-$era" 0 '"blob": "AAECAwQF' -- --stdio "$INPUT --era=$era" read res://two
    expect "read-not-base64-$era" 3 '' -- --stdio "$INPUT --era=$era" read res://notb64
    expect "prompt-$era" 0 '"text": "hello ada"' -- --stdio "$INPUT --era=$era" prompt greet '{"who":"ada"}'
    expect "complete-$era" 0 '"values": ["alice", "albert"]' -- --stdio "$INPUT --era=$era" complete prompt greet who al
done
# --validate-output: a result that does not fit its tool's outputSchema is printed, and
# exits 3; an isError result is not checked (2); without the flag nothing is checked.
for era in modern legacy; do
    expect "validate-output-$era" 3 '"structuredContent": {"n": "one"}' -- --validate-output --stdio "$INPUT --era=$era" call misshaped
    stderr_has "validate-output-status-$era" 'MCPC_ERR_OUTPUT_SCHEMA'
    expect "validate-output-fits-$era" 0 '"structuredContent": {"n": 1}' -- --validate-output --stdio "$INPUT --era=$era" call shaped
    expect "validate-output-missing-$era" 3 '' -- --validate-output --stdio "$INPUT --era=$era" call unshaped
    expect "validate-output-is-error-$era" 2 '"isError": true' -- --validate-output --stdio "$INPUT --era=$era" call failing
    expect "no-validate-output-$era" 0 '"structuredContent": {"n": "one"}' -- --stdio "$INPUT --era=$era" call misshaped
done
"$MCPC" --log-level info --stdio "$INPUT --era=modern" call log >/dev/null 2>"$tmp/err"
if grep -qxF 'mcpc: server log error: {"n": 3}' "$tmp/err" && ! grep -q debug "$tmp/err"; then
    echo "ok   log-level"; passed=$((passed + 1))
else
    echo "FAIL log-level: $(cat "$tmp/err")"; failed=$((failed + 1))
fi
expect usage-log-level 1 '' -- --log-level loud --stdio "$INPUT" tools
expect version 0 "mcpc $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1) (libmcpc" -- --version
# --config FILE --server NAME: the hosts' mcpServers file (env and cwd reach the server).
cat >"$tmp/servers.json" <<EOF_CONFIG
{"mcpServers": {
  "modern": {"command": "$PYTHON", "args": ["demo/server.py"], "env": {"MCPC_DEMO_ERA": "modern"}},
  "in-demo": {"command": "$PYTHON", "args": ["server.py"], "cwd": "$PWD/demo"},
  "broken": {"command": ["not", "a", "string"]},
  "nul": {"command": "$PYTHON", "args": ["demo/server.py\\u0000--fault=init-error"]}
}}
EOF_CONFIG
expect config-env 0 '"negotiatedBy":"discover"' -- --config "$tmp/servers.json" --server modern info
expect config-cwd 0 '"text":"hi"' -- --config "$tmp/servers.json" --server in-demo call echo '{"text":"hi"}'
expect usage-config-unknown 1 '' -- --config "$tmp/servers.json" --server nope info
expect usage-config-broken 1 '' -- --config "$tmp/servers.json" --server broken info
expect usage-config-nul 1 '' -- --config "$tmp/servers.json" --server nul info
expect usage-config-and-stdio 1 '' -- --config "$tmp/servers.json" --server modern --stdio "$SERVER" info
# --config FILE alone: every server of the file behind one host (docs/host.md).
cat >"$tmp/host.json" <<EOF_CONFIG
{"mcpServers": {
  "demo": {"command": "$PYTHON", "args": ["demo/server.py"], "includeTools": ["echo", "add"]},
  "modern": {"command": "$PYTHON", "args": ["demo/server.py", "--era=modern"], "excludeTools": ["slow"]},
  "gone": {"command": "/nonexistent/mcpc-no-such-server"}
}}
EOF_CONFIG
expect host-tools 0 '"name":"modern__echo","server":"modern"' -- --config "$tmp/host.json" tools
expect host-call 0 '"structuredContent":{"sum":42}' -- --config "$tmp/host.json" call demo__add '{"a":2,"b":40}'
expect host-status 0 '"name":"gone","state":"failed"' -- --config "$tmp/host.json" status
expect host-unknown-tool 3 '' -- --config "$tmp/host.json" call demo__slow
expect host-bad-file 1 '' -- --config "$tmp/servers.json" tools
expect usage-host-info 1 '' -- --config "$tmp/host.json" info
# A VS Code file's ${input:ID} comes from MCPC_INPUT_<ID>; without it the file is refused.
cat >"$tmp/vscode.json" <<EOF_VSCODE
{
  // JSONC, as VS Code writes it
  "inputs": [{"type": "promptString", "id": "demo-script", "description": "The server", "password": true}],
  "servers": {"demo": {"command": "${PYTHON}", "args": ["\${input:demo-script}"],},},
}
EOF_VSCODE
MCPC_INPUT_DEMO_SCRIPT=demo/server.py expect host-input-from-env 0 '"name":"demo__echo"' -- --config "$tmp/vscode.json" tools
expect host-input-missing 1 '' -- --config "$tmp/vscode.json" tools
if grep -q 'input:demo-script' "$tmp/err"; then
    echo "ok   host-input-missing-named"; passed=$((passed + 1))
else
    echo "FAIL host-input-missing-named: $(head -c 400 "$tmp/err")"; failed=$((failed + 1))
fi
expect usage-status-one-server 1 '' -- --stdio "$SERVER" status
expect usage-read-no-uri 1 '' -- --stdio "$INPUT" read
expect usage-complete-kind 1 '' -- --stdio "$INPUT" complete tool greet who al
expect usage-complete-short 1 '' -- --stdio "$INPUT" complete prompt greet who
expect_nothing_started prompt-args-not-json --stdio "$starts" prompt greet not-json

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

# MCP Apps: the tools' views, a view with its policy, a view refused for its policy.
expect apps-views 0 '{"name":"clock_tick","uri":"ui://demo/clock.html","visibility":["app"]}' -- \
    --stdio "$SERVER --apps" --extension 'io.modelcontextprotocol/ui={"mimeTypes":["text/html;profile=mcp-app"]}' views
expect apps-view 0 '"allow":"clipboard-write","domain":"demo-clock.example.com","prefersBorder":true' -- \
    --stdio "$SERVER --apps --era=modern" view ui://demo/clock.html
expect apps-view-refused 3 '' -- --stdio "$SERVER --apps" view ui://demo/inject.html
stderr_has apps-view-refused-says-why 'csp.connectDomains[0]'
expect apps-view-not-ui 1 '' -- --stdio "$SERVER --apps" view https://example.com/v.html
# tools: each tool's view and visibility in a member "mcpc" in front, in both
# generations; the rest of each tool is the server's (as one page of tools/list has it).
expect apps-tools-view 0 '{"mcpc":{"view":"ui://demo/clock.html","visibility":["app"]},"name":"clock_tick",' -- \
    --stdio "$SERVER --apps" tools
expect apps-tools-model-only 0 '{"mcpc":{"view":null,"visibility":["model"]},"name":"model_only",' -- \
    --stdio "$SERVER --apps --era=modern" tools
expect apps-tools-flat-key 0 '{"mcpc":{"view":"ui://demo/listed.html","visibility":["model","app"]},"name":"legacy_view",' -- \
    --stdio "$SERVER --apps" tools
expect tools-no-view 0 '[{"mcpc":{"view":null,"visibility":["model","app"]},"name":"echo",' -- --stdio "$SERVER" tools
"$MCPC" --stdio "$SERVER --apps --page-size 100" tools >"$tmp/tools" 2>"$tmp/err" &&
    "$MCPC" --stdio "$SERVER --apps --page-size 100" request tools/list '{}' >"$tmp/listed" 2>>"$tmp/err"
if [ $? -eq 0 ] && "$PYTHON" -c 'import json, sys
tools, listed = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["tools"]
sys.exit(not (all(next(iter(t)) == "mcpc" for t in tools)
              and [{k: v for k, v in t.items() if k != "mcpc"} for t in tools] == listed))' "$tmp/tools" "$tmp/listed"; then
    echo "ok   tools-rest-as-sent"; passed=$((passed + 1))
else
    echo "FAIL tools-rest-as-sent: $(head -c 400 "$tmp/err")"; failed=$((failed + 1))
fi

# Tasks: followed to the end with each status on stderr; --detach prints the reference
# and leaves the task running, and another process resumes it (the modern fixture
# keeps its tasks across connections).
expect task-followed 0 '"text":"report on cli"' -- --stdio "$SERVER --tasks --era=modern" \
    --task prefer call task_report '{"topic":"cli","ms":200}'
stderr_has task-status-shown 'mcpc: task working: started'
stderr_has task-status-completed 'mcpc: task completed'
expect task-required-by-default 0 '"text":"report on r"' -- --stdio "$SERVER --tasks" call task_required '{"topic":"r"}'
expect task-forbid 3 '' -- --stdio "$SERVER --tasks" --task forbid call task_required '{"topic":"r"}'
expect task-require-refused 3 '' -- --stdio "$SERVER --tasks" --task require call echo '{"text":"x"}'
stderr_has task-require-says-why 'does not support tasks'
expect task-bad-mode 1 '' -- --stdio "$SERVER --tasks" --task sometimes call echo '{}'
expect task-timeout 4 '' -- --stdio "$SERVER --tasks" --task prefer --task-timeout 500 \
    call task_report '{"topic":"n","fault":"never"}'
start_fixture --era modern --tasks
url="http://127.0.0.1:$fixture_port/mcp"
expect task-detach 0 '"generation":"v2"' -- --url "$url" --extension io.modelcontextprotocol/tasks --detach \
    call task_report '{"topic":"handoff","ms":300}'
reference=$(cat "$tmp/out")
expect task-resumed-elsewhere 0 '"text":"report on handoff"' -- --url "$url" --extension io.modelcontextprotocol/tasks \
    resume "$reference"
expect task-resume-bad-reference 1 '' -- --url "$url" resume '{"generation":"v9"}'
stop_fixture
expect_nothing_started http-insecure-refused --url http://example.com/mcp call echo '{}'

# The HTTP+SSE transport of 2024-11-05: found by the fallback, or chosen.
coproc LEGACY { exec "$PYTHON" tests/fixtures/legacy_sse_server.py; }
legacy_pid=$LEGACY_PID
read -r _ legacy_port <&"${LEGACY[0]}"
expect legacy-sse-fallback 0 '"text": "old"' -- --url "http://127.0.0.1:$legacy_port/sse" call echo '{"text":"old"}'
printf '{"mcpServers": {"old": {"url": "http://127.0.0.1:%s/sse", "type": "sse"}}}' "$legacy_port" >"$tmp/old.json"
expect config-sse 0 '"name": "slow"' -- --config "$tmp/old.json" --server old tools
expect legacy-sse-pinned 0 '"name": "slow"' -- --transport sse --url "http://127.0.0.1:$legacy_port/sse" tools
expect legacy-sse-streamable-only 3 '' -- --transport streamable --url "http://127.0.0.1:$legacy_port/sse" info
expect usage-transport 1 '' -- --transport h3 --url "http://127.0.0.1:$legacy_port/sse" info
eval "exec ${LEGACY[1]}>&-"
wait "$legacy_pid" 2>/dev/null

start_fixture --era modern
url="http://127.0.0.1:$fixture_port/mcp"
expect http-modern-info 0 '"negotiatedBy":"discover"' -- --url "$url" info
expect http-modern-headers 0 '"text":"ok"' -- --url "$url" call header_tool '{"region":"eu","priority":3}'
stop_fixture

start_fixture --fault auth
url="http://127.0.0.1:$fixture_port/mcp"
expect http-no-token 3 '' -- --url "$url" info
printf '{"mcpServers": {"remote": {"url": "%s", "headers": {"Authorization": "Bearer good-token"}}}}' "$url" >"$tmp/remote.json"
expect config-url-headers 0 '"protocolVersion"' -- --config "$tmp/remote.json" --server remote info
expect http-bearer 0 '"protocolVersion"' -- --bearer good-token --url "$url" info
expect http-header 0 '"protocolVersion"' -- --header "Authorization: Bearer good-token" --url "$url" info
# The fixture speaks HTTP/1.1 only.
expect http-version-1.1 0 '"protocolVersion"' -- --http1.1 --header "Authorization: Bearer good-token" --url "$url" info
expect http2-prior-knowledge-refused 3 '' -- --http2-prior-knowledge --header "Authorization: Bearer good-token" --timeout 3000 --url "$url" info
expect usage-http-versions 1 '' -- --http1.1 --http2-prior-knowledge --url "$url" info
stop_fixture

certs=$(mktemp -d)
if sh tests/fixtures/make_certs.sh "$certs" >/dev/null 2>&1; then
    start_fixture --tls "$certs/server.pem" "$certs/server.key"
    url="https://127.0.0.1:$fixture_port/mcp"
    expect https-untrusted 3 '' -- --url "$url" info
    expect https-cacert 0 '"text":"tls"' -- --cacert "$certs/ca.pem" --url "$url" call echo '{"text":"tls"}'
    # Through a real proxy (tinyproxy, Basic authentication), and around one.
    proxy_port=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    printf 'Port %s\nListen 127.0.0.1\nLogFile "%s/proxy.log"\nLogLevel Info\nBasicAuth u pw\n' \
        "$proxy_port" "$tmp" >"$tmp/proxy.conf"
    tinyproxy -d -c "$tmp/proxy.conf" >/dev/null 2>&1 &
    proxy_pid=$!
    for _ in $(seq 500); do (exec 3<>"/dev/tcp/127.0.0.1/$proxy_port") 2>/dev/null && break; sleep 0.01; done
    p="http://127.0.0.1:$proxy_port"
    expect proxy-tunnel 0 '"text":"via"' -- --cacert "$certs/ca.pem" --proxy "$p" --proxy-user u:pw --url "$url" call echo '{"text":"via"}'
    expect proxy-auth-required 3 '' -- --cacert "$certs/ca.pem" --proxy "$p" --url "$url" info
    grep -q "MCPC_ERR_PROXY_AUTH" "$tmp/err" || { echo "FAIL proxy-auth-required: $(cat "$tmp/err")"; failed=$((failed + 1)); }
    expect proxy-noproxy 0 '"text":"direct"' -- --cacert "$certs/ca.pem" --proxy "$p" --noproxy 127.0.0.1 --url "$url" call echo '{"text":"direct"}'
    HTTPS_PROXY="$p" expect proxy-env-spares-loopback 0 '"text":"env"' -- --cacert "$certs/ca.pem" --url "$url" call echo '{"text":"env"}'
    kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null
    expect usage-proxy-scheme 1 '' -- --proxy socks5://127.0.0.1:1 --url "$url" info
    expect usage-proxy-user 1 '' -- --proxy-user nocolon --url "$url" info
    stop_fixture
else
    echo "FAIL make_certs.sh"; failed=$((failed + 1))
fi
rm -rf "$certs"

# OAuth: a browser login against the loopback authorization server and protected MCP
# server of tests/fixtures/oauth_fixture.py. The test plays the browser: it GETs the
# URL the CLI prints (the fixture approves at once with a redirect), then GETs the
# redirect's Location, which is the CLI's listener.
cat >"$tmp/browse.py" <<'EOF_BROWSE'
# browse.py URL: follows a login as a browser would; prints the listener's status.
import sys, urllib.error, urllib.request
class Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None
def get(url):
    try:
        r = urllib.request.build_opener(Stay).open(url, timeout=10)
        return r.status, r.headers.get("Location")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Location")
status, location = get(sys.argv[1])
if status != 302 or not location:
    sys.exit("authorize answered %s" % status)
print(get(location)[0])
EOF_BROWSE
browse() { "$PYTHON" "$tmp/browse.py" "$1"; }
# A stand-in for xdg-open on PATH: it records that it ran, then plays the browser.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "$1" >>"%s"\nexec "%s" "%s" "$1"\n' "$tmp/opened" "$PYTHON" "$tmp/browse.py" >"$tmp/bin/xdg-open"
chmod +x "$tmp/bin/xdg-open"
wait_for_url() {  # FILE PID: the login URL the CLI writes to FILE (empty if it exits first)
    local u="" line
    for _ in $(seq 1 1000); do
        # Whole lines only: read fails on a last line the CLI is still writing (a slow
        # CLI, under qemu, was caught halfway through the URL).
        while IFS= read -r line; do
            case $line in http://127.0.0.1:[0-9]*/authorize\?*) u=$line; break ;; esac
        done 2>/dev/null <"$1"
        [ -n "$u" ] && break
        kill -0 "$2" 2>/dev/null || break
        sleep 0.01
    done
    printf '%s' "$u"
}
coproc OAUTH { exec "$PYTHON" tests/fixtures/oauth_fixture.py --client cc-client cc-secret --log "$tmp/oauth.log"; }
oauth_pid=$OAUTH_PID
read -r _ oauth_port <&"${OAUTH[0]}"
url="http://127.0.0.1:$oauth_port/mcp"
store="$tmp/oauth-store.json"

PATH="$tmp/bin:$PATH" "$MCPC" --oauth --no-browser --oauth-store "$store" --url "$url" tools >"$tmp/out" 2>"$tmp/err" &
pid=$!
login_url=$(wait_for_url "$tmp/err" "$pid")
listener=$( [ -n "$login_url" ] && browse "$login_url")
wait "$pid"
got=$?
if [ "$got" -eq 0 ] && [ "$listener" = 200 ] && grep -q '"name": *"echo"' "$tmp/out" && [ ! -e "$tmp/opened" ]; then
    echo "ok   oauth-login"; passed=$((passed + 1))
else
    echo "FAIL oauth-login: exit $got, listener '$listener'; stderr: $(head -c 600 "$tmp/err")"; failed=$((failed + 1))
fi
if [ "$(stat -c %a "$store" 2>/dev/null)" = 600 ] && grep -q '"tokens http' "$store"; then
    echo "ok   oauth-store-0600"; passed=$((passed + 1))
else
    echo "FAIL oauth-store-0600: $(ls -l "$store" 2>&1)"; failed=$((failed + 1))
fi
logins=$(grep -c '"event": "authorize"' "$tmp/oauth.log")
expect oauth-headless-stored 0 '"text": "hi"' -- --oauth --headless --oauth-store "$store" --url "$url" call echo '{"text":"hi"}'
if [ "$(grep -c '"event": "authorize"' "$tmp/oauth.log")" -eq "$logins" ]; then
    echo "ok   oauth-no-second-login"; passed=$((passed + 1))
else
    echo "FAIL oauth-no-second-login"; failed=$((failed + 1))
fi
expect oauth-headless-no-store 3 '' -- --oauth --headless --url "$url" info
if grep -q 'MCPC_ERR_LOGIN_REQUIRED' "$tmp/err"; then
    echo "ok   oauth-login-required-message"; passed=$((passed + 1))
else
    echo "FAIL oauth-login-required-message: $(cat "$tmp/err")"; failed=$((failed + 1))
fi
MCPC_CLIENT_SECRET=cc-secret expect oauth-client-credentials 0 '"protocolVersion"' -- --oauth --client-credentials --client-id cc-client --url "$url" info
expect oauth-client-credentials-wrong-secret 3 '' -- --oauth --client-credentials --client-id cc-client --client-secret nope --url "$url" info
if ! grep -q 'nope' "$tmp/err"; then
    echo "ok   oauth-secret-not-shown"; passed=$((passed + 1))
else
    echo "FAIL oauth-secret-not-shown: $(cat "$tmp/err")"; failed=$((failed + 1))
fi
# Without --no-browser the URL goes to xdg-open (here the stand-in, which logs in).
PATH="$tmp/bin:$PATH" expect oauth-login-xdg-open 0 '"text": "web"' -- --oauth --url "$url" call echo '{"text":"web"}'
if grep -q '^http://127\.0\.0\.1:[0-9]*/authorize?' "$tmp/opened" 2>/dev/null; then
    echo "ok   oauth-xdg-open-got-the-url"; passed=$((passed + 1))
else
    echo "FAIL oauth-xdg-open-got-the-url"; failed=$((failed + 1))
fi
expect oauth-login-timeout 4 '' -- --timeout 500 --oauth --no-browser --url "$url" info

# A configuration file's oauth member: the login is with its client (no registration)
# and its scope; the secret it takes from the environment shows nowhere. With
# "oauth": false the server is not logged in to.
printf '{"mcpServers": {"prot": {"url": "%s", "oauth": {"clientId": "cc-client",
  "clientSecret": "${env:MCPC_TEST_CC_SECRET}", "scopes": ["mcp"]}}}}' "$url" >"$tmp/oauth-cfg.json"
printf '{"mcpServers": {"prot": {"url": "%s", "oauth": false}}}' "$url" >"$tmp/oauth-off.json"
registered=$(grep -c '"event": "register"' "$tmp/oauth.log")
MCPC_TEST_CC_SECRET=cc-secret "$MCPC" --oauth --no-browser --config "$tmp/oauth-cfg.json" tools >"$tmp/out" 2>"$tmp/err" &
pid=$!
login_url=$(wait_for_url "$tmp/err" "$pid")
listener=$( [ -n "$login_url" ] && browse "$login_url")
wait "$pid"
got=$?
case "$login_url" in *client_id=cc-client*) by_file=1 ;; *) by_file=0 ;; esac
case "$login_url" in *scope=mcp*) [ "$by_file" = 1 ] || by_file=0 ;; *) by_file=0 ;; esac
if [ "$got" -eq 0 ] && [ "$listener" = 200 ] && [ "$by_file" = 1 ] && grep -q '"prot__echo"' "$tmp/out" \
    && [ "$(grep -c '"event": "register"' "$tmp/oauth.log")" -eq "$registered" ] && ! grep -q cc-secret "$tmp/err"; then
    echo "ok   oauth-from-config-file"; passed=$((passed + 1))
else
    echo "FAIL oauth-from-config-file: exit $got, listener '$listener', url '$login_url'; $(head -c 600 "$tmp/err")"
    failed=$((failed + 1))
fi
expect oauth-config-off 0 '"tools":[]' -- --oauth --no-browser --config "$tmp/oauth-off.json" tools
if grep -q 'server prot: failed: MCPC_ERR_AUTH' "$tmp/err" && ! grep -q '/authorize?' "$tmp/err"; then
    echo "ok   oauth-config-off-no-login"; passed=$((passed + 1))
else
    echo "FAIL oauth-config-off-no-login: $(head -c 600 "$tmp/err")"; failed=$((failed + 1))
fi

# Ctrl-C while the login waits for the browser cancels it: exit 5.
"$MCPC" --oauth --no-browser --url "$url" info >/dev/null 2>"$tmp/err" &
pid=$!
login_url=$(wait_for_url "$tmp/err" "$pid")
kill -INT "$pid"
wait "$pid"
got=$?
if [ -n "$login_url" ] && [ "$got" -eq 5 ] && grep -q 'MCPC_ERR_LOGIN_CANCELLED' "$tmp/err"; then
    echo "ok   oauth-sigint-cancels-login"; passed=$((passed + 1))
else
    echo "FAIL oauth-sigint-cancels-login: exit $got; $(head -c 600 "$tmp/err")"; failed=$((failed + 1))
fi
eval "exec ${OAUTH[1]}>&-"
wait "$oauth_pid" 2>/dev/null

# No user: private_key_jwt client authentication (the fixture verifies the ES256
# signature), the JWT bearer grant with an assertion command, and the ID-JAG flow
# with an ID token command and the fixture's identity provider. The fixture offers
# DPoP, so tokens are DPoP-bound unless --no-dpop.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/key.pem" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/other-key.pem" 2>/dev/null
openssl pkey -in "$tmp/key.pem" -pubout -out "$tmp/key.pub" 2>/dev/null
openssl pkey -in "$tmp/other-key.pem" -pubout -out "$tmp/other-key.pub" 2>/dev/null
assertion="eyJhbGciOiJSUzI1NiJ9.wif-$RANDOM$RANDOM.sig"
id_token="eyJhbGciOiJSUzI1NiJ9.idt-$RANDOM$RANDOM.sig"
coproc OAUTH { exec "$PYTHON" tests/fixtures/oauth_fixture.py --key-client key-client "$tmp/key.pub" \
    --assertion "$assertion" --id-token "$id_token" --dpop --log "$tmp/oauth27.log"; }
oauth_pid=$OAUTH_PID
read -r _ oauth_port <&"${OAUTH[0]}"
url="http://127.0.0.1:$oauth_port/mcp"
idp="--idp-token-endpoint http://127.0.0.1:$oauth_port/idp/token --idp-client-id idp-client"
check() {  # NAME CONDITION...: a check of its own
    local name=$1
    shift
    if "$@"; then
        echo "ok   $name"; passed=$((passed + 1))
    else
        echo "FAIL $name: $(head -c 600 "$tmp/err")"; failed=$((failed + 1))
    fi
}
expect oauth-private-key-jwt 0 '"protocolVersion"' -- --oauth --client-credentials --client-id key-client --client-key "$tmp/key.pem" --url "$url" info
check oauth-private-key-jwt-used grep -q '"grant": "client_credentials", "client_id": "key-client", "auth": "private_key_jwt", "dpop": true' "$tmp/oauth27.log"
check oauth-dpop-by-default grep -q '"event": "mcp", "method": "initialize", "scheme": "DPoP"' "$tmp/oauth27.log"
check oauth-dpop-never-bearer bash -c "! grep -q '\"scheme\": \"Bearer\"' '$tmp/oauth27.log'"
expect oauth-private-key-jwt-no-dpop 0 '"text": "k"' -- --oauth --no-dpop --client-credentials --client-id key-client --client-key "$tmp/key.pem" --url "$url" call echo '{"text":"k"}'
check oauth-no-dpop-is-bearer grep -q '"auth": "private_key_jwt", "dpop": false' "$tmp/oauth27.log"
check oauth-no-dpop-sends-bearer grep -q '"event": "mcp", "method": "tools/call", "scheme": "Bearer"' "$tmp/oauth27.log"
expect oauth-private-key-jwt-wrong-key 3 '' -- --oauth --client-credentials --client-id key-client --client-key "$tmp/other-key.pem" --url "$url" info
printf '#!/bin/sh\necho run >>"%s"\nprintf "  %%s\\n" "$1"\n' "$tmp/runs" >"$tmp/bin/print-assertion"
chmod +x "$tmp/bin/print-assertion"
PATH="$tmp/bin:$PATH" expect oauth-assertion-command 0 '"text": "w"' -- --oauth --assertion-command "print-assertion '$assertion'" --url "$url" call echo '{"text":"w"}'
check oauth-assertion-command-ran-once [ "$(grep -c run "$tmp/runs" 2>/dev/null)" = 1 ]
check oauth-assertion-not-shown bash -c "! grep -qF -- '${assertion#*.}' '$tmp/err'"
expect oauth-assertion-command-fails 3 '' -- --oauth --assertion-command "sh -c 'echo x; exit 7'" --url "$url" info
check oauth-assertion-command-fails-login-required grep -q 'MCPC_ERR_LOGIN_REQUIRED' "$tmp/err"
check oauth-assertion-command-fails-says-why grep -q 'assertion-command: the command exited with status 7' "$tmp/err"
expect oauth-assertion-wrong 3 '' -- --oauth --assertion-command "printf nope" --url "$url" info
# A command that hangs: it records its pid, then sleeps in its place.
printf '#!/bin/sh\necho $$ >"%s"\nexec sleep 30\n' "$tmp/hang.pid" >"$tmp/bin/hang"
chmod +x "$tmp/bin/hang"
gone() { ! kill -0 "$(cat "$tmp/hang.pid")" 2>/dev/null; }
t0=$(date +%s%N)
PATH="$tmp/bin:$PATH" expect oauth-assertion-command-hangs 3 '' -- --timeout 2000 --oauth --assertion-command hang --url "$url" info
ms=$((($(date +%s%N) - t0) / 1000000))
check oauth-assertion-command-hang-bounded [ "$ms" -lt 5000 ]
check oauth-assertion-command-hang-login-required grep -q 'MCPC_ERR_LOGIN_REQUIRED' "$tmp/err"
check oauth-assertion-command-hang-killed gone
# Ctrl-C while the command runs kills it and ends the run at once: exit 5.
rm -f "$tmp/hang.pid"
t0=$(date +%s%N)
PATH="$tmp/bin:$PATH" "$MCPC" --oauth --assertion-command hang --url "$url" info >/dev/null 2>"$tmp/err" &
pid=$!
for _ in $(seq 1 1000); do
    [ -s "$tmp/hang.pid" ] && break
    sleep 0.01
done
kill -INT "$pid"
wait "$pid"
got=$?
ms=$((($(date +%s%N) - t0) / 1000000))
quick=$([ "$got" -eq 5 ] && [ "$ms" -lt 10000 ] && echo yes)
check oauth-assertion-command-sigint [ "$quick" = yes ]
check oauth-assertion-command-sigint-killed gone
# shellcheck disable=SC2086 # $idp is two options and their values
expect oauth-id-token-command 0 '"text": "e"' -- --oauth --id-token-command "printf %s $id_token" $idp --url "$url" call echo '{"text":"e"}'
check oauth-id-jag-exchanged grep -q '"event": "idp-exchange", "ok": true, "client_id": "idp-client"' "$tmp/oauth27.log"
# shellcheck disable=SC2086
expect oauth-id-token-wrong 3 '' -- --oauth --id-token-command "printf wrong" $idp --url "$url" info
eval "exec ${OAUTH[1]}>&-"
wait "$oauth_pid" 2>/dev/null

echo 'not a key' >"$tmp/bad-key.pem"
u=http://127.0.0.1:1/mcp
expect usage-client-key-needs-oauth 1 '' -- --client-key "$tmp/key.pem" --url $u info
expect usage-client-key-needs-id 1 '' -- --oauth --client-key "$tmp/key.pem" --url $u info
expect usage-client-key-and-secret 1 '' -- --oauth --client-id c --client-secret s --client-key "$tmp/key.pem" --url $u info
expect usage-client-key-unreadable 1 '' -- --oauth --client-id c --client-key "$tmp/no-such-key.pem" --url $u info
expect usage-client-key-invalid 1 '' -- --oauth --client-id c --client-key "$tmp/bad-key.pem" --url $u info
expect usage-assertion-needs-oauth 1 '' -- --assertion-command true --url $u info
expect usage-assertion-and-client-credentials 1 '' -- --oauth --client-credentials --client-id c --client-secret s --assertion-command true --url $u info
expect usage-assertion-bad-words 1 '' -- --oauth --assertion-command "print 'x" --url $u info
expect usage-assertion-and-id-token 1 '' -- --oauth --assertion-command true --id-token-command true --idp-token-endpoint $u --idp-client-id c --url $u info
expect usage-id-token-needs-idp 1 '' -- --oauth --id-token-command true --url $u info
expect usage-idp-needs-id-token 1 '' -- --oauth --idp-token-endpoint $u --idp-client-id c --assertion-command true --url $u info
expect usage-idp-bad-url 1 '' -- --oauth --id-token-command true --idp-token-endpoint nope --idp-client-id c --url $u info
expect usage-no-dpop-needs-oauth 1 '' -- --no-dpop --url $u info

echo '{"tokens x": 1}' >"$tmp/bad-store.json"
expect usage-oauth-needs-url 1 '' -- --oauth --stdio "$SERVER" info
expect usage-oauth-option-needs-oauth 1 '' -- --headless --url http://127.0.0.1:1/mcp info
expect usage-oauth-and-bearer 1 '' -- --oauth --bearer t --url http://127.0.0.1:1/mcp info
expect usage-client-credentials-no-secret 1 '' -- --oauth --client-credentials --client-id c --url http://127.0.0.1:1/mcp info
expect usage-secret-no-id 1 '' -- --oauth --client-secret s --url http://127.0.0.1:1/mcp info
expect usage-store-no-dir 1 '' -- --oauth --oauth-store "$tmp/no-such-dir/store.json" --url http://127.0.0.1:1/mcp info
expect usage-bad-store 1 '' -- --oauth --oauth-store "$tmp/bad-store.json" --url http://127.0.0.1:1/mcp info

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
