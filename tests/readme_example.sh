#!/bin/bash
# Each C example shown in the docs (README.md, docs/transports.md) is the file its
# marker names, word for word; each compiles with -Wall -Wextra -Werror and runs
# against the demo server.
set -u
LIB=${LIB:-target/debug}
mkdir -p build
passed=0
failed=0

check() {  # DOC FILE PATTERN...
    local doc=$1 file=$2
    shift 2
    local block
    block=$(awk -v m="<!-- example: $file -->" '$0 == m {f=1; next} f && /^```c$/ {g=1; next} g && /^```$/ {exit} g' "$doc")
    if [ "$block" != "$(cat "$file")" ]; then
        echo "FAIL $file: $doc's copy differs"
        diff <(echo "$block") "$file" | head -20
        failed=$((failed + 1))
        return
    fi
    local bin="build/example_$(basename "$file" .c)"
    if ! gcc -std=c11 -Wall -Wextra -Werror -Iinclude "$file" -L"$LIB" -lmcpc -lpthread -Wl,-rpath,"$PWD/$LIB" -o "$bin"; then
        echo "FAIL $file: does not compile"
        failed=$((failed + 1))
        return
    fi
    local out
    out=$("$bin")
    local rc=$?
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

check README.md examples/hello.c 'tool: echo' 'structured: {"sum":5}'
check README.md examples/async.c 'echo: hi' 'slow: MCPC_ERR_CANCELLED'
check README.md examples/elicit.c 'mcpc-demo asks: name?' 'wants_input: hello Ada'
check docs/transports.md examples/seam.c 'echo: over the seam'

echo "readme examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
