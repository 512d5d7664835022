#!/bin/bash
# The C++ example of bindings/cpp/README.md (bindings/cpp/examples/hello.cpp) is that
# README's copy word for word, compiles with -std=c++17 -Wall -Wextra -Werror and runs
# against the demo server. Ends with "N passed, N failed".
set -u
CXX=${CXX:-g++}
LIB=${LIB:-target/debug}
mkdir -p build/bindings
passed=0
failed=0
run() {  # NAME COMMAND...
    local name=$1
    shift
    if "$@"; then echo "ok   $name"; passed=$((passed + 1)); else echo "FAIL $name"; failed=$((failed + 1)); fi
}
example=bindings/cpp/examples/hello.cpp
bin=build/bindings/example_hello_cpp
run "bindings/cpp/README.md shows $example" env MCPC_README=bindings/cpp/README.md \
    tests/bindings/readme_check.sh "$example"
run "$example compiles" $CXX -std=c++17 -Wall -Wextra -Werror -Iinclude -Ibindings/cpp "$example" \
    -L"$LIB" -lmcpc -lpthread -Wl,-rpath,"$PWD/$LIB" -o "$bin"
expect() {
    local out
    out=$("$bin") || { echo "    exit status $?"; return 1; }
    for line in '25 tools, the first: echo' 'structured: {"sum":5}' 'tool failed: no luck' \
        'timed out: tools/call "slow": timed out after ' 'echo: hi' 'slow: MCPC_ERR_CANCELLED'; do
        # Whole lines, except the timeout's, which ends with the time measured.
        grep -q -- "^$(sed 's/[][\.*^$/]/\\&/g' <<<"$line")" <<<"$out" ||
            { echo "    no line '$line' in:"; sed 's/^/    /' <<<"$out"; return 1; }
    done
}
run "$example runs against the demo server" expect
echo "cpp examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
