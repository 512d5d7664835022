#!/bin/bash
# The library exports exactly the mcpc_* functions that the header declares.
set -eu
lib=${1:-target/debug/libmcpc.so}
header=${2:-include/mcpc.h}
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" && $3 ~ /^mcpc_/ {print $3}' | sort)
declared=$(grep -oE '\bmcpc_[a-z0-9_]+\(' "$header" | tr -d '(' | sort -u)
if [ "$exported" != "$declared" ]; then
    echo "exported symbols differ from the header:"
    diff -u --label header --label library <(echo "$declared") <(echo "$exported") || true
    exit 1
fi
echo "symbols: $(echo "$exported" | wc -l) exported, all declared in the header"
