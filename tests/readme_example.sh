#!/bin/bash
# Each C example shown in the docs (README.md, docs/transports.md) is the file its
# marker names, word for word; each compiles with -Wall -Wextra -Werror and runs
# against the demo server.
set -u
LIB=${LIB:-target/debug}
mkdir -p build
passed=0
failed=0

# build DOC FILE: checks that DOC's copy of FILE is FILE word for word and compiles
# it to build/example_NAME; false (and counted as failed) otherwise.
build() {
    local doc=$1 file=$2
    local block
    block=$(awk -v m="<!-- example: $file -->" '$0 == m {f=1; next} f && /^```c$/ {g=1; next} g && /^```$/ {exit} g' "$doc")
    if [ "$block" != "$(cat "$file")" ]; then
        echo "FAIL $file: $doc's copy differs"
        diff <(echo "$block") "$file" | head -20
        failed=$((failed + 1))
        return 1
    fi
    bin="build/example_$(basename "$file" .c)"
    if ! gcc -std=c11 -Wall -Wextra -Werror -Iinclude "$file" -L"$LIB" -lmcpc -lpthread -Wl,-rpath,"$PWD/$LIB" -o "$bin"; then
        echo "FAIL $file: does not compile"
        failed=$((failed + 1))
        return 1
    fi
}

# expect_lines FILE RC OUTPUT PATTERN...: every pattern is a whole line of OUTPUT.
expect_lines() {
    local file=$1 rc=$2 out=$3
    shift 3
    for pattern in "$@"; do
        if ! grep -qxF -- "$pattern" <<<"$out"; then
            echo "FAIL $file: exit $rc, output lacks the line '$pattern':"
            echo "$out"
            failed=$((failed + 1))
            return
        fi
    done
    echo "ok   $file"
    passed=$((passed + 1))
}

check() {  # DOC FILE PATTERN...: runs the example against the demo server
    local doc=$1 file=$2 bin
    shift 2
    build "$doc" "$file" || return
    local out
    out=$("$bin")
    expect_lines "$file" $? "$out" "$@"
}

# check_oauth DOC FILE PATTERN...: runs the example against the OAuth fixture
# (tests/fixtures/oauth_fixture.py), playing the user: it opens the URL the example
# shows (the fixture approves at once) and pastes the redirect into its stdin.
check_oauth() {
    local doc=$1 file=$2 bin
    shift 2
    build "$doc" "$file" || return
    local out
    out=$(python3 - "$bin" <<'EOF_LOGIN'
import subprocess, sys, urllib.request
class Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None
fixture = subprocess.Popen([sys.executable, "tests/fixtures/oauth_fixture.py"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
port = fixture.stdout.readline().split()[1]
ex = subprocess.Popen([sys.argv[1], f"http://127.0.0.1:{port}/mcp"], stdin=subprocess.PIPE,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
line = ex.stderr.readline()
if line.startswith("open: "):
    try:
        urllib.request.build_opener(Stay).open(line[6:].strip(), timeout=10)
    except urllib.error.HTTPError as e:
        ex.stdin.write(e.headers.get("Location", "") + "\n")
        ex.stdin.flush()
out, err = ex.communicate(timeout=30)
sys.stdout.write(out)
if ex.returncode != 0:
    sys.stderr.write(line + err)
fixture.stdin.close()
fixture.wait(timeout=10)
sys.exit(ex.returncode)
EOF_LOGIN
)
    expect_lines "$file" $? "$out" "$@"
}

# check_workload DOC FILE PATTERN...: runs the example with a workload token against
# the OAuth fixture that accepts it and offers DPoP; the MCP requests must have
# carried a DPoP-bound token.
check_workload() {
    local doc=$1 file=$2 bin
    shift 2
    build "$doc" "$file" || return
    local out log
    log=$(mktemp)
    out=$(python3 - "$bin" "$log" <<'EOF_WORKLOAD'
import os, subprocess, sys
fixture = subprocess.Popen([sys.executable, "tests/fixtures/oauth_fixture.py", "--assertion", "the-workload-jwt",
                            "--dpop", "--log", sys.argv[2]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
port = fixture.stdout.readline().split()[1]
env = dict(os.environ, MCPC_WORKLOAD_TOKEN="the-workload-jwt")
ex = subprocess.run([sys.argv[1], f"http://127.0.0.1:{port}/mcp"], env=env, capture_output=True, text=True,
                    timeout=30)
sys.stdout.write(ex.stdout)
sys.stderr.write(ex.stderr)
fixture.stdin.close()
fixture.wait(timeout=10)
sys.exit(ex.returncode)
EOF_WORKLOAD
)
    local rc=$?
    if ! grep -q '"method": "tools/call", "scheme": "DPoP"' "$log"; then
        echo "FAIL $file: the call did not carry a DPoP-bound token:"
        cat "$log"
        failed=$((failed + 1))
        rm -f "$log"
        return
    fi
    rm -f "$log"
    expect_lines "$file" $rc "$out" "$@"
}

check README.md examples/hello.c 'tool: echo' 'structured: {"sum":5}'
check README.md examples/resources.c 'demo://greeting (text/plain): Hello from the mcpc demo.' \
    'prompt: {"description":"A greeting","messages":[{"role":"user","content":{"type":"text","text":"Say hello to Ada."}}]}'
check README.md examples/async.c 'echo: hi' 'slow: MCPC_ERR_CANCELLED'
check README.md examples/elicit.c 'mcpc-demo asks: name?' 'wants_input: hello Ada'
check docs/transports.md examples/seam.c 'echo: over the seam'
check_oauth README.md examples/oauth.c 'tool: echo'
check_workload README.md examples/workload.c 'echo: as a workload'

echo "readme examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
