#!/bin/bash
# The C++ examples of bindings/cpp/README.md (bindings/cpp/examples/*.cpp) are that
# README's copies word for word, compile with -std=c++17 -Wall -Wextra -Werror and run
# against the demo server, printing the lines expected of them. Ends with "N passed,
# N failed".
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
expect() {  # BINARY LINE...: each line is the start of a line the binary prints
    local bin=$1 out line
    shift
    out=$("$bin") || { echo "    exit status $?"; return 1; }
    for line in "$@"; do
        grep -q -- "^$(sed 's/[][\.*^$/]/\\&/g' <<<"$line")" <<<"$out" ||
            { echo "    no line '$line' in:"; sed 's/^/    /' <<<"$out"; return 1; }
    done
}
example() {  # NAME LINE...: bindings/cpp/examples/NAME.cpp shown, compiled, run
    local example=bindings/cpp/examples/$1.cpp bin=build/bindings/example_$1_cpp
    shift
    run "bindings/cpp/README.md shows $example" env MCPC_README=bindings/cpp/README.md \
        tests/bindings/readme_check.sh "$example"
    run "$example compiles" $CXX -std=c++17 -Wall -Wextra -Werror -Iinclude -Ibindings/cpp "$example" \
        -L"$LIB" -lmcpc -lpthread -Wl,-rpath,"$PWD/$LIB" -o "$bin"
    run "$example runs against the demo server" expect "$bin" "$@"
}
# The timeout's line ends with the time measured.
example hello '25 tools, the first: echo' 'structured: {"sum":5}' 'tool failed: no luck' \
    'timed out: tools/call "slow": timed out after ' 'echo: hi' 'slow: MCPC_ERR_CANCELLED'
example hosts 'added: 3' 'failed: broken' 'listed: 1' 'sum: {"sum":5}' \
    'unknown: no tool named "broken__echo" in the catalog'
example elicit 'mcpc-demo asks: name?' 'wants_input: hello Ada'
echo "cpp examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
