#!/bin/bash
# The library exports exactly the mcpc_* functions that the header declares, and
# every name the header declares (macro, type, tag, enum value, function) carries the
# mcpc_/MCPC_ prefix. Only the include guard MCPC_H, __cplusplus and system includes
# are let through.
set -eu
lib=${1:-target/debug/libmcpc.so}
header=${2:-include/mcpc.h}
cc=${CC:-cc}
status=0

exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" && $3 ~ /^mcpc_/ {print $3}' | sort)
declared=$(grep -oE '\bmcpc_[a-z0-9_]+\(' "$header" | tr -d '(' | sort -u)
if [ "$exported" != "$declared" ]; then
    echo "exported symbols differ from the header:"
    diff -u --label header --label library <(echo "$declared") <(echo "$exported") || true
    status=1
fi

# Includes: system headers only.
local_includes=$(grep -E '^[[:space:]]*#[[:space:]]*include' "$header" | grep -vE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<[a-z0-9_/]+\.h>' || true)
# Names tested by #if/#ifdef/#ifndef.
conditions=$(grep -E '^[[:space:]]*#[[:space:]]*(if|ifdef|ifndef|elif)\b' "$header" |
    sed -E 's/^[[:space:]]*#[[:space:]]*[a-z]+//; s/\bdefined\b//g' | grep -oE '[A-Za-z_][A-Za-z0-9_]*' || true)
# Macros the header defines: the preprocessor's list with and without it (the system
# includes left out).
no_includes() { grep -vE '^[[:space:]]*#[[:space:]]*include' "$header"; }
macros=$(comm -13 <("$cc" -E -dM -x c /dev/null | sort) <(no_includes | "$cc" -E -dM -x c - | sort) |
    awk '{sub(/\(.*/, "", $2); print $2}')
# Declarations, from the preprocessed header (no comments, no extern "C") in C and in
# C++: typedef names, struct/enum/union tags, enum values, function and object names.
decls() {
    no_includes | "$cc" -E -P "$@" - | tr '\n' ' ' | sed -E 's/"[^"]*"/ /g; s/([][(){};,=*])/ \1 /g' | awk '
        function flush(   i, name, fnptr) {
            if (n == 0) return
            name = ""; fnptr = 0
            for (i = 1; i <= n; i++) {
                if (t[i] == "(" && t[i + 1] == "*" && t[i + 3] == ")") { name = t[i + 2]; fnptr = 1; break }
                if (t[i] == "(") break
                if (t[i] ~ /^[A-Za-z_][A-Za-z0-9_]*$/ && !(t[i] in kw)) name = t[i]
            }
            if (name != "") print name
            n = 0
        }
        BEGIN {
            split("typedef struct enum union const volatile extern static inline void char short int long " \
                  "float double signed unsigned bool _Bool size_t int8_t int16_t int32_t int64_t uint8_t " \
                  "uint16_t uint32_t uint64_t intptr_t uintptr_t", k, " ")
            for (i in k) kw[k[i]] = 1
        }
        {
            for (f = 1; f <= NF; f++) {
                tok = $f
                if (tok == "{") {
                    # extern "C" { ... } (its string already gone) holds declarations.
                    if (depth == 0 && prev == "extern") { stack[++sp] = "x"; n--; prev = ""; continue }
                    stack[++sp] = "b"
                    depth++
                    if (depth == 1) { enumbody = (prev_tag == "enum"); expect_value = enumbody; prev = tok }
                    continue
                }
                if (tok == "}") {
                    if (sp > 0 && stack[sp--] == "b") depth--
                    if (depth == 0) prev = tok
                    continue
                }
                if (depth > 0) {
                    if (enumbody && depth == 1) {
                        if (expect_value && tok ~ /^[A-Za-z_]/) { print tok; expect_value = 0 }
                        if (tok == ",") expect_value = 1
                    }
                    continue
                }
                if ((prev == "struct" || prev == "enum" || prev == "union") && tok ~ /^[A-Za-z_]/) print tok
                if (tok == "struct" || tok == "enum" || tok == "union") prev_tag = tok
                if (tok == ";") { flush(); prev_tag = ""; prev = tok; continue }
                t[++n] = tok
                prev = tok
            }
        }
        END { flush() }'
}
names=$( (decls -x c; decls -x c++) | sort -u)

bad=$( (echo "$macros" | grep -vxE 'MCPC_H|MCPC_[A-Z0-9_]+'
        echo "$conditions" | grep -vxE 'MCPC_H|__cplusplus|MCPC_[A-Z0-9_]+'
        echo "$names" | grep -vE '^(mcpc_|MCPC_)') | grep -v '^$' | sort -u || true)
if [ -n "$local_includes" ]; then
    echo "the header includes more than system headers:"
    echo "$local_includes"
    status=1
fi
if [ -n "$bad" ]; then
    echo "names in the header without the mcpc_/MCPC_ prefix:"
    echo "$bad"
    status=1
fi
if [ -z "$names" ] || [ -z "$macros" ]; then
    echo "found no declarations or no macros in $header: the check is broken"
    status=1
fi
[ "$status" = 0 ] || exit 1
echo "symbols: $(echo "$exported" | wc -l) exported, all declared in the header;" \
    "$(echo "$names" | wc -l) names and $(echo "$macros" | wc -l) macros, all prefixed"
