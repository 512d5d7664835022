#!/usr/bin/env bash
# run.sh CLIENT [OUTDIR]: runs the official MCP conformance suite against CLIENT (the
# C conformance client, tests/conformance/client.c), with the runners that
# tests/peers/install.sh installed (their peers.env is read from $MCPC_PEERS_DIR, by
# default ~/.cache/mcpc-peers, unless the MCPC_PEERS_* variables are already set).
#
#   stable runner 0.1.16:          initialize, tools_call, sse-retry, auth/resource-mismatch
#   next runner 0.2.0-alpha.12:    json-schema-2020-12-preservation, json-schema-ref-no-deref,
#                                  and the 2026-07-28 scenarios request-metadata,
#                                  http-standard-headers, http-custom-headers,
#                                  http-invalid-tool-headers, sep-2322-client-request-state,
#                                  and the skills extension's sep-2640-client-no-prefetch,
#                                  -verify-digest, -verify-size, -verify-frontmatter (which
#                                  fail here when a check is SKIPPED: the client never listed)
#   both runners, --suite all:     with expected-failures.yml / expected-failures-next.yml,
#                                  which list only the OAuth and elicitation scenarios
#
# A scenario passes when the runner exits 0: no failed check, no warning, the client
# exited 0 in time. Each run's checks.json (with all HTTP traffic) is kept in
# OUTDIR (default build/conformance). Ends with "conformance: N passed, N failed";
# exits 0 only when everything passed. A missing runner is a failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
client=${1:?usage: run.sh CLIENT [OUTDIR]}
out=${2:-build/conformance}
case "$client" in /*) ;; *) client="$PWD/$client" ;; esac
case "$client" in *" "*) echo "run.sh: the runner splits its command on spaces: $client" >&2; exit 1 ;; esac

if [ -z "${MCPC_PEERS_NODE:-}" ]; then
  env_file="${MCPC_PEERS_DIR:-$HOME/.cache/mcpc-peers}/peers.env"
  # shellcheck disable=SC1090
  [ -f "$env_file" ] && . "$env_file"
fi
for f in "${MCPC_PEERS_NODE:-}" "${MCPC_PEERS_CONFORMANCE:-}" "${MCPC_PEERS_CONFORMANCE_NEXT:-}" "$client"; do
  if [ -z "$f" ] || [ ! -f "$f" ]; then
    echo "run.sh: missing ${f:-a peer}: run tests/peers/install.sh (and build the client)" >&2
    echo "conformance: 0 passed, 1 failed"
    exit 1
  fi
done

rm -rf "$out"
mkdir -p "$out"
pass=0
fail=0
t_all=$SECONDS

# report NAME LOG STATUS SECONDS [suite]: one line, and on failure what went wrong
report() {
  if [ "$3" -eq 0 ]; then
    pass=$((pass + 1))
    echo "PASS $1 (${4}s)"
    return
  fi
  fail=$((fail + 1))
  echo "FAIL $1 (${4}s), exit $3; log: $2"
  if [ "${5:-}" = suite ]; then # the scenarios that differ from the baseline
    sed 's/\x1b\[[0-9;]*m//g' "$2" | sed -n '/^Unexpected failures\|^Stale baseline entries/,/^$/p' | sed 's/^/    /'
  else # the failed checks, the warnings, and what the client printed
    sed 's/\x1b\[[0-9;]*m//g' "$2" |
      grep -E ' (FAILURE|WARNING) |^ +(Error|Warning):|EXITED|TIMED OUT|^\[' | head -30 | sed 's/^/    /'
  fi
}

# scenario LABEL RUNNER_JS SCENARIO
scenario() {
  local log="$out/$1/${3//\//_}.log" t0=$SECONDS rc
  mkdir -p "$out/$1"
  timeout 120 "$MCPC_PEERS_NODE" "$2" client --command "$client" --scenario "$3" -o "$out/$1" >"$log" 2>&1
  rc=$?
  # A skills scenario whose checks were skipped proved nothing: the client never listed.
  if [ "$rc" -eq 0 ] && [[ "$3" == sep-2640-* ]] && grep -q SKIPPED "$log"; then
    rc=1
  fi
  report "$1 $3" "$log" "$rc" $((SECONDS - t0))
}

# suite LABEL RUNNER_JS EXPECTED_FAILURES
suite() {
  local log="$out/$1/suite-all.log" t0=$SECONDS rc
  mkdir -p "$out/$1/suite"
  timeout 300 "$MCPC_PEERS_NODE" "$2" client --command "$client" --suite all --expected-failures "$3" \
    -o "$out/$1/suite" >"$log" 2>&1
  rc=$?
  report "$1 --suite all (expected failures: $(basename "$3"))" "$log" "$rc" $((SECONDS - t0)) suite
}

for s in initialize tools_call sse-retry auth/resource-mismatch; do
  scenario 0.1.16 "$MCPC_PEERS_CONFORMANCE" "$s"
done
for s in json-schema-2020-12-preservation json-schema-ref-no-deref request-metadata http-standard-headers \
  http-custom-headers http-invalid-tool-headers sep-2322-client-request-state \
  sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size \
  sep-2640-client-verify-frontmatter; do
  scenario 0.2.0-alpha.12 "$MCPC_PEERS_CONFORMANCE_NEXT" "$s"
done
suite 0.1.16 "$MCPC_PEERS_CONFORMANCE" "$here/expected-failures.yml"
suite 0.2.0-alpha.12 "$MCPC_PEERS_CONFORMANCE_NEXT" "$here/expected-failures-next.yml"

echo "conformance took $((SECONDS - t_all))s; results in $out"
echo "conformance: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
