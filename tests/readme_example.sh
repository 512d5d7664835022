#!/bin/bash
# Each C example in README.md is the file its marker names, word for word; each
# compiles with -Wall -Wextra -Werror and runs against the demo server.
set -u
LIB=${LIB:-target/debug}
mkdir -p build
passed=0
failed=0

check() {  # FILE PATTERN...
    local file=$1
    shift
    local block
    block=$(awk -v m="<!-- example: $file -->" '$0 == m {f=1; next} f && /^```c$/ {g=1; next} g && /^```$/ {exit} g' README.md)
    if [ "$block" != "$(cat "$file")" ]; then
        echo "FAIL $file: README.md's copy differs"
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

check examples/hello.c 'tool: echo' 'structured: {"sum":5}'
check examples/async.c 'echo: hi' 'slow: MCPC_ERR_CANCELLED'
check examples/seam.c 'echo: over the seam'

echo "readme examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
