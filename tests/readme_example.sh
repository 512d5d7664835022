#!/bin/bash
# Each example in examples/ compiles with -Wall -Wextra -Werror and runs against the
# demo server (or the OAuth fixture); where a page shows a copy (README.md's quick
# start, docs/transports.md), the copy is the file its marker names, word for word.
set -u
LIB=${LIB:-target/debug}
mkdir -p build
passed=0
failed=0

# build DOC FILE: checks that DOC's copy of FILE is FILE word for word (DOC "-": no
# page shows a copy, only a link) and compiles it to build/example_NAME; false (and
# counted as failed) otherwise.
build() {
    local doc=$1 file=$2
    local block
    [ "$doc" = - ] || block=$(awk -v m="<!-- example: $file -->" '$0 == m {f=1; next} f && /^```c$/ {g=1; next} g && /^```$/ {exit} g' "$doc")
    if [ "$doc" != - ] && [ "$block" != "$(cat "$file")" ]; then
        echo "FAIL $file: $doc's copy differs"
        diff <(echo "$block") "$file" | head -20
        failed=$((failed + 1))
        return 1
    fi
    bin="build/example_$(basename "$file" .c)"
    if ! gcc -std=c11 -Wall -Wextra -Werror -Iinclude "$file" -L"$LIB" -lmcpc -lpthread -Wl,-rpath,"$(cd "$LIB" && pwd)" -o "$bin"; then
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

# check_workload DOC FILE: runs the example's three flows with no user against the
# OAuth fixture that offers DPoP: a client key (private_key_jwt), a workload token
# (JWT bearer), an enterprise ID token (ID-JAG); each call must have carried a
# DPoP-bound token.
check_workload() {
    local doc=$1 file=$2 bin
    shift 2
    build "$doc" "$file" || return
    local out log dir
    dir=$(mktemp -d)
    log="$dir/fixture.log"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/key.pem" 2>/dev/null &&
        openssl pkey -in "$dir/key.pem" -pubout -out "$dir/key.pub"
    out=$(python3 - "$bin" "$dir" <<'EOF_WORKLOAD'
import os, subprocess, sys
bin, d = sys.argv[1], sys.argv[2]
fixture = subprocess.Popen([sys.executable, "tests/fixtures/oauth_fixture.py", "--assertion", "the-workload-jwt",
                            "--id-token", "the-employee-id-token", "--key-client", "svc-1", d + "/key.pub",
                            "--dpop", "--log", d + "/fixture.log"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True)
port = fixture.stdout.readline().split()[1]
url = f"http://127.0.0.1:{port}/mcp"
rc = 0
for args, token in ((["key", "svc-1", d + "/key.pem"], ""), (["workload"], "the-workload-jwt"),
                    (["enterprise", f"http://127.0.0.1:{port}/idp/token", "idp-client"], "the-employee-id-token")):
    env = dict(os.environ, MCPC_WORKLOAD_TOKEN=token)
    ex = subprocess.run([bin, url, *args], env=env, capture_output=True, text=True, timeout=30)
    sys.stdout.write(args[0] + " " + ex.stdout)
    sys.stderr.write(ex.stderr)
    rc = rc or ex.returncode
fixture.stdin.close()
fixture.wait(timeout=10)
sys.exit(rc)
EOF_WORKLOAD
)
    local rc=$?
    local calls
    calls=$(grep -c '"method": "tools/call", "scheme": "DPoP"' "$log")
    if [ "$calls" != 3 ] || ! grep -q '"event": "idp-exchange", "ok": true' "$log" ||
        ! grep -q '"auth": "private_key_jwt"' "$log"; then
        echo "FAIL $file: the fixture did not see the three flows with DPoP ($calls calls):"
        cat "$log"
        failed=$((failed + 1))
        rm -rf "$dir"
        return
    fi
    rm -rf "$dir"
    expect_lines "$file" $rc "$out" 'key echo: as a service' 'workload echo: as a service' \
        'enterprise echo: as a service'
}

check README.md examples/hello.c 'tool: echo' 'structured: {"sum":5}'
check - examples/resources.c 'demo://greeting (text/plain): Hello from the mcpc demo.' \
    'prompt: {"description":"A greeting","messages":[{"role":"user","content":{"type":"text","text":"Say hello to Ada."}}]}'
check - examples/async.c 'echo: hi' 'slow: MCPC_ERR_CANCELLED'
check - examples/host.c 'settled' 'modern__add: {"sum":5}'
check - examples/elicit.c 'mcpc-demo asks: name?' 'wants_input: hello Ada'
check docs/transports.md examples/seam.c 'echo: over the seam'
check_oauth - examples/oauth.c 'tool: echo'
check_workload - examples/workload.c

echo "readme examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
