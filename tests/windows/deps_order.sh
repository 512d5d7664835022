#!/bin/bash
# `make windows` and `make test-windows` work on a machine without mingw-w64 or Wine:
# every target of mk/windows.mk whose recipe runs one of their tools (or cargo for the
# Windows target) has tests/windows/setup.sh run first. Each such target's dry run
# (make -n -B: as if nothing were built, whatever is installed) must name setup.sh
# before any of those tools. Runs no tool itself; takes about a second.
set -euo pipefail
cd "$(dirname "$0")/../.."

# A recipe line that needs what setup.sh installs, as written in mk/windows.mk...
export NEEDS='\$\((WIN_CC|WIN_CXX|WIN_WINDRES|WIN_DLLTOOL|WIN_RUN|WINE)\)|--target \$\(WIN_TARGET\)'
# ...and as make prints it.
runs='x86_64-w64-mingw32-|wine|--target x86_64-pc-windows-gnu'

# The heads of the rules whose recipe has such a line, and the two commands README names.
heads=$(awk '
    /^[^ \t#][^=]*:([^=]|$)/ && !/^\.PHONY/ { split($0, a, ":"); head = a[1]; next }
    /^\t/ && head != "" && $0 ~ ENVIRON["NEEDS"] { print head; head = "" }
    /^$/ { head = "" }' mk/windows.mk)
[ -n "$heads" ] || { echo "deps_order: no rule of mk/windows.mk runs a Windows tool?"; exit 1; }

passed=0
failed=0
while IFS= read -r head; do
    target=$(make -s --no-print-directory --eval "deps-order-name: ; @echo $head" deps-order-name)
    dry=$(make -n -B --no-print-directory "$target" 2>&1) || { echo "FAIL $target: make -n: $dry"; failed=$((failed + 1)); continue; }
    setup=$(grep -n -m1 'tests/windows/setup\.sh' <<<"$dry" | cut -d: -f1 || true)
    tool=$(grep -n -m1 -E "$runs" <<<"$dry" || true)
    if [ -z "$setup" ]; then
        echo "FAIL $target: never runs tests/windows/setup.sh"; failed=$((failed + 1))
    elif [ -n "$tool" ] && [ "${tool%%:*}" -lt "$setup" ]; then
        echo "FAIL $target: runs ${tool#*:} before tests/windows/setup.sh"; failed=$((failed + 1))
    else
        echo "ok   $target"; passed=$((passed + 1))
    fi
done < <(printf '%s\n' $heads windows test-windows | awk '!seen[$0]++')
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
