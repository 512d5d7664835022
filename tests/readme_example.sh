#!/bin/bash
# The C example in README.md is examples/hello.c, word for word; it compiles with
# -Wall -Wextra -Werror and runs against the demo server.
set -eu
LIB=${LIB:-target/debug}
block=$(awk '/<!-- example: examples\/hello.c -->/{f=1; next} f && /^```c$/{g=1; next} g && /^```$/{exit} g' README.md)
if [ "$block" != "$(cat examples/hello.c)" ]; then
    echo "README.md's example differs from examples/hello.c"
    diff <(echo "$block") examples/hello.c || true
    exit 1
fi
mkdir -p build
gcc -std=c11 -Wall -Wextra -Werror -Iinclude examples/hello.c -L"$LIB" -lmcpc -Wl,-rpath,"$PWD/$LIB" -o build/hello
out=$(build/hello)
echo "$out" | grep -q '^tool: echo$'
echo "$out" | grep -q '^structured: {"sum":5}$'
echo "readme example: 1 passed, 0 failed"
