#!/bin/bash
# README.md shows examples word for word: the fenced block that follows the line
# "<!-- example: FILE -->" must equal FILE.
#
# Usage: tests/bindings/readme_check.sh FILE...     (MCPC_README=PATH checks another file)
# Prints "ok"/"FAIL" per file; exits nonzero when any copy differs or is missing.
set -u
README=${MCPC_README:-README.md}
status=0
for file in "$@"; do
    block=$(awk -v m="<!-- example: $file -->" '$0 == m {f=1; next} f && /^```[a-z+]*$/ && !g {g=1; next} g && /^```$/ {exit} g' "$README")
    if [ -z "$block" ]; then
        echo "FAIL $file: $README has no example block marked <!-- example: $file -->"
        status=1
    elif [ "$block" != "$(cat "$file")" ]; then
        echo "FAIL $file: the copy in $README differs"
        diff <(echo "$block") "$file" | head -20
        status=1
    else
        echo "ok   $file: $README shows it word for word"
    fi
done
exit $status
