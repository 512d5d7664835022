#!/usr/bin/env bash
# Instructions per call of mcpc's client process under callgrind, for four cases:
#   stdio-w1  W1 (sequential calls) over stdio
#   http-w1   W1 over HTTP with JSON replies
#   stdio-w2  W2 (64 calls in flight, the async way) over stdio
#   http-w2   W2 over HTTP with JSON replies
# and, asked for by --cases, per read of a 1 MiB resource:
#   stdio-w5, http-w5  W5 (reads of the text resource)
#   stdio-w6, http-w6  W6 (reads of the blob resource)
# Each case runs mcpc_bench --client mcpc under callgrind twice, once with N units of the
# workload and once with none (a read case: with N + 1 reads and with 1, as the warm-up
# reads once when there are reads), everything else equal (connect once, the same warm-up, no
# other workload, no idle wait, one block); the figure is the difference of the client
# process's instructions (all its threads) divided by N. Every case is measured --runs
# times, to show the run-to-run variation. Instruction counts do not depend on the load of
# the machine, so the figures can be compared across builds of the library (a change in
# the harness changes them too: compare builds with the same benches/ sources).
#
#   benches/callgrind.sh [--lib DIR] [--include DIR] [--build DIR] [--out FILE]
#                        [--runs R] [--cases LIST] [--w1-n N] [--w2-n N] [--read-n N] [--warmup N]
#                        [--pin CPU]
#   benches/callgrind.sh --compare BASE.jsonl NEW.jsonl [--limit PCT]
#
#   --lib DIR      holds libmcpc.so (default: the repo's target/release)
#   --include DIR  holds mcpc.h (default: DIR/include if --lib has one, else the repo's include)
#   --build DIR    where bench_server, mcpc_bench and the callgrind files go (default: a temp dir)
#   --out FILE     the JSON lines (default: BUILD/callgrind.jsonl)
#   --runs R       measurements per case (default 2)
#   --cases LIST   comma-separated, from stdio-w1,http-w1,stdio-w2,http-w2 (the default) and
#                  stdio-w5,http-w5,stdio-w6,http-w6
#   --w1-n N       calls in W1 (default 2000); --w2-n N: calls in W2 (default 5000);
#   --read-n N     reads in W5 and W6 (default 20)
#   --warmup N     BENCH_WARMUP, the same in both runs (default 50)
#   --compare      prints each case's figures in two saved files and the changes; exit status 1
#                  if a case's figure for all threads changed by more than --limit percent
#                  (default 2); the caller's thread's figure is shown, not checked
#   --pin CPU      runs valgrind and the server on that CPU (taskset)
#
# The server runs natively (not under valgrind). Besides all threads, the figures are split
# into the thread that makes the calls ("caller", the client process's first thread) and
# mcpc's other threads ("others"). In W1 the caller's figure repeats to about 0.1%; the
# others' include work that follows the wall clock (timers, such as the stdio transport's
# re-arm check every millisecond), which under valgrind varies from run to run. In W2 the
# work moves between the threads from run to run, and only the total is steady.
# The JSON lines: one "run" line per measurement and one "case" line per case with the
# means and the spreads ((max - min) / mean) of its runs.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)

die() { echo "callgrind.sh: $*" >&2; exit 1; }

compare() {
    local base=$1 new=$2 limit=$3
    [ -r "$base" ] || die "cannot read $base"
    [ -r "$new" ] || die "cannot read $new"
    awk -v limit="$limit" '
        function field(s, k,   m) {
            if (match(s, "\"" k "\":\"[^\"]*\"")) { m = substr(s, RSTART, RLENGTH); sub(/^[^:]*:"/, "", m); sub(/"$/, "", m); return m }
            if (match(s, "\"" k "\":[-0-9.e+]+")) { m = substr(s, RSTART, RLENGTH); sub(/^[^:]*:/, "", m); return m }
            return ""
        }
        /"kind":"case"/ {
            c = field($0, "case")
            if (FILENAME == ARGV[1]) {
                b[c] = field($0, "ir_per_call"); bs[c] = field($0, "spread_pct")
                bc[c] = field($0, "caller_ir_per_call"); bcs[c] = field($0, "caller_spread_pct")
            } else {
                n[c] = field($0, "ir_per_call"); ns[c] = field($0, "spread_pct")
                nc[c] = field($0, "caller_ir_per_call"); ncs[c] = field($0, "caller_spread_pct")
                order[++k] = c
            }
        }
        function row(c, what, x, xs, y, ys,   d, flag) {
            d = 100 * (y - x) / x
            flag = (d > limit || d < -limit) ? "  over " limit "%" : ""
            if (flag != "" && what == "all") bad = 1
            printf "%-10s %-7s %12.1f %12.1f %+8.2f%%   %5.2f%% / %5.2f%%%s\n", c, what, x, y, d, xs, ys, flag
        }
        END {
            bad = 0
            printf "%-10s %-7s %12s %12s %9s   %s\n", "case", "threads", "base Ir/call", "new Ir/call", "change", "spread base / new"
            for (i = 1; i <= k; i++) {
                c = order[i]
                if (!(c in b)) { printf "%-10s not in the base\n", c; continue }
                row(c, "all", b[c], bs[c], n[c], ns[c])
                row(c, "caller", bc[c], bcs[c], nc[c], ncs[c])
            }
            exit bad
        }' "$base" "$new"
}

LIB="$REPO/target/release"
INC=""
BUILD=""
OUT=""
RUNS=2
CASES="stdio-w1,http-w1,stdio-w2,http-w2"
W1_N=2000
W2_N=5000
READ_N=20
WARMUP=50
LIMIT=2
PIN=""
CMP=()
while [ $# -gt 0 ]; do
    case "$1" in
        --lib) LIB=$2; shift 2 ;;
        --include) INC=$2; shift 2 ;;
        --build) BUILD=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --cases) CASES=$2; shift 2 ;;
        --w1-n) W1_N=$2; shift 2 ;;
        --w2-n) W2_N=$2; shift 2 ;;
        --read-n) READ_N=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --limit) LIMIT=$2; shift 2 ;;
        --pin) PIN=$2; shift 2 ;;
        --compare) CMP=("$2" "$3"); shift 3 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done
if [ ${#CMP[@]} -eq 2 ]; then
    compare "${CMP[0]}" "${CMP[1]}" "$LIMIT"
    exit $?
fi

command -v valgrind >/dev/null || die "valgrind is not installed"
[ -d "$LIB" ] || die "no directory $LIB (build the library, or give --lib DIR)"
LIB=$(cd "$LIB" && pwd)
[ -f "$LIB/libmcpc.so" ] || die "no libmcpc.so in $LIB"
if [ -z "$INC" ]; then
    if [ -f "$LIB/include/mcpc.h" ]; then INC="$LIB/include"; else INC="$REPO/include"; fi
fi
INC=$(cd "$INC" && pwd)
[ -f "$INC/mcpc.h" ] || die "no mcpc.h in $INC"
if [ -z "$BUILD" ]; then BUILD=$(mktemp -d "${TMPDIR:-/tmp}/mcpc-callgrind.XXXXXX"); fi
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
[ -n "$OUT" ] || OUT="$BUILD/callgrind.jsonl"
for c in ${CASES//,/ }; do
    case "$c" in stdio-w[1256]|http-w[1256]) ;; *) die "unknown case $c" ;; esac
done

# Build as mk/bench.mk does, against the given library and headers. The library's
# soname (libmcpc.so.0.MINOR) is what the loader looks for: when LIB has no such
# name, a link to LIB/libmcpc.so in BUILD/lib stands in for it.
CC=${CC:-gcc}
CFLAGS="-std=c11 -O2 -Wall -Wextra -Werror -g"
RPATH="$LIB"
SONAME=$(readelf -d "$LIB/libmcpc.so" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
if [ -n "$SONAME" ] && [ ! -e "$LIB/$SONAME" ]; then
    mkdir -p "$BUILD/lib"
    ln -sfn "$LIB/libmcpc.so" "$BUILD/lib/$SONAME"
    RPATH="$BUILD/lib:$LIB"
fi
"$CC" $CFLAGS -I"$INC" -I"$HERE" "$HERE/bench_server.c" -o "$BUILD/bench_server"
"$CC" $CFLAGS -I"$INC" -I"$HERE" "$HERE/mcpc_bench.c" -L"$LIB" -lmcpc -lpthread -lm \
    -Wl,-rpath,"$RPATH" -o "$BUILD/mcpc_bench"
LOADED=$(ldd "$BUILD/mcpc_bench" | awk '/libmcpc/ {print $3}')
LOADED=$(readlink -f "$LOADED")
[ "$LOADED" = "$(readlink -f "$LIB/libmcpc.so")" ] || die "mcpc_bench would load $LOADED, not $LIB/libmcpc.so"
LIB_SHA=$(sha256sum "$LIB/libmcpc.so" | cut -c1-16)
VG=$(valgrind --version)

SRV_PID=""
SRV_WR=""
SRV_RD=""
http_start() {
    coproc SRV { exec ${PINCMD[@]+"${PINCMD[@]}"} "$BUILD/bench_server" http --port 0; }
    SRV_WR=${SRV[1]}
    SRV_RD=${SRV[0]}
    local word port
    read -r -u "$SRV_RD" word port || die "bench_server did not start"
    [ "$word" = PORT ] || die "bench_server said: $word $port"
    URL="http://127.0.0.1:$port/mcp"
}
http_stop() {
    # bench_server exits when its stdin closes
    eval "exec $SRV_WR>&- $SRV_RD<&-"
    wait "$SRV_PID" 2>/dev/null || true
}

# Runs one measurement: prints the client process's instruction count.
#   measure CASE UNITS DIR
measure() {
    local case=$1 units=$2 dir=$3 transport=${1%-*} wl=${1#*-}
    local w1=0 w2=0 conc=0 w5=0 w6=0
    case "$wl" in
        w1) w1=$units ;;
        w2) w2=$units; conc=64 ;;
        w5) w5=$((units + 1)) ;;
        w6) w6=$((units + 1)) ;;
    esac
    rm -rf "$dir"
    mkdir -p "$dir"
    local target
    if [ "$transport" = stdio ]; then
        target=(stdio "$BUILD/bench_server stdio")
    else
        http_start
        target=(http "$URL")
    fi
    # BENCH_W2_CONC=0 also leaves W2 out of the warm-up; with 64, the warm-up runs a round
    # of it in both runs. BENCH_W2_BOTH=0: W2 is the async way only (the blocking threads
    # way would add a second W2 of N calls). BENCH_BLOCKS=1: one block, so two calls of the
    # server's stats tool per workload (part of the figure: 2/N of a call).
    local rc=0 pid
    env BENCH_W1_N="$w1" BENCH_W2_N="$w2" BENCH_W2_CONC="$conc" BENCH_W2_BOTH=0 \
        BENCH_W3_REPS=0 BENCH_W4_REPS=0 BENCH_W5_REPS="$w5" BENCH_W6_REPS="$w6" \
        BENCH_WARMUP="$WARMUP" BENCH_BLOCKS=1 \
        BENCH_INIT_REPS=1 BENCH_IDLE_MS=0 BENCH_FIRST=mcpc \
        ${PINCMD[@]+"${PINCMD[@]}"} valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$dir/callgrind.out.%p" \
        "$BUILD/mcpc_bench" "${target[@]}" --client mcpc --label "cg-$case" \
        >"$dir/stdout" 2>"$dir/stderr" &
    pid=$!
    wait "$pid" || rc=$?
    [ "$transport" = stdio ] || http_stop
    [ "$rc" = 0 ] || die "$case ($units units) failed, see $dir/stderr"
    local key=w1_n want=$units
    case "$wl" in
        w2) key=w2_n ;;
        w5) key=w5_reps; want=$w5 ;;
        w6) key=w6_reps; want=$w6 ;;
    esac
    grep -q "\"$key\":$want," "$dir/stdout" || die "$case: $key is not $want in $dir/stdout"
    # callgrind writes one file per thread of each process (--separate-threads=yes),
    # callgrind.out.PID-TID: the harness's (pid $pid) and its forked client's. The
    # client's thread 1 is the one that makes the calls; the others are mcpc's.
    local f p cpid="" total=0 caller="" t
    for f in "$dir"/callgrind.out.*-*; do
        p=$(sed -n 's/^pid: //p' "$f")
        [ "$p" != "$pid" ] || continue
        [ -z "$cpid" ] || [ "$cpid" = "$p" ] || die "$case: more than one client process in $dir"
        cpid=$p
        t=$(sed -n 's/^summary: //p' "$f")
        [ -n "$t" ] || die "$case: no summary in $f"
        total=$((total + t))
        case "$f" in *-01) caller=$t ;; esac
    done
    [ -n "$cpid" ] && [ -n "$caller" ] || die "$case: no client callgrind files in $dir"
    echo "$total $caller"
}

PINCMD=()
if [ -n "$PIN" ]; then
    command -v taskset >/dev/null || die "--pin needs taskset"
    PINCMD=(taskset -c "$PIN")
fi
: >"$OUT"
printf '# %s, library %s (sha256 %s), headers %s%s\n' "$VG" "$LIB/libmcpc.so" "$LIB_SHA" "$INC" \
    "${PIN:+, pinned to CPU $PIN}"
printf '%-10s %6s %4s %13s %13s %10s %10s %10s\n' case N run "Ir (N units)" "Ir (none)" \
    "Ir/call" "caller" "others"
# mean, min, max and spread (% of the mean) of a list of numbers
stats() { printf '%s\n' "$@" | awk '{ s += $1; if (NR == 1 || $1 < lo) lo = $1; if (NR == 1 || $1 > hi) hi = $1 }
    END { m = s / NR; a = m < 0 ? -m : m; printf "%.1f %.1f %.1f %.2f", m, lo, hi, (a ? 100 * (hi - lo) / a : 0) }'; }
SUMMARY=()
for c in ${CASES//,/ }; do
    case "${c#*-}" in w1) n=$W1_N ;; w2) n=$W2_N ;; *) n=$READ_N ;; esac
    tot=() cal=() oth=()
    for r in $(seq 1 "$RUNS"); do
        read -r work wcall <<<"$(measure "$c" "$n" "$BUILD/runs/$c-$r-work")"
        read -r zero zcall <<<"$(measure "$c" 0 "$BUILD/runs/$c-$r-zero")"
        read -r per pcall pother <<<"$(awk -v w="$work" -v z="$zero" -v wc="$wcall" -v zc="$zcall" -v n="$n" \
            'BEGIN { printf "%.1f %.1f %.1f", (w - z) / n, (wc - zc) / n, ((w - wc) - (z - zc)) / n }')"
        tot+=("$per") cal+=("$pcall") oth+=("$pother")
        printf '%-10s %6s %4s %13s %13s %10s %10s %10s\n' "$c" "$n" "$r" "$work" "$zero" "$per" "$pcall" "$pother"
        printf '{"kind":"run","case":"%s","n":%s,"run":%s,"ir_work":%s,"ir_zero":%s,"ir_per_call":%s,"caller_ir_work":%s,"caller_ir_zero":%s,"caller_ir_per_call":%s,"others_ir_per_call":%s,"lib":"%s","lib_sha256":"%s","valgrind":"%s","warmup":%s,"pin":"%s"}\n' \
            "$c" "$n" "$r" "$work" "$zero" "$per" "$wcall" "$zcall" "$pcall" "$pother" \
            "$LIB/libmcpc.so" "$LIB_SHA" "$VG" "$WARMUP" "$PIN" >>"$OUT"
    done
    read -r mean lo hi spread <<<"$(stats "${tot[@]}")"
    read -r cmean clo chi cspread <<<"$(stats "${cal[@]}")"
    read -r omean olo ohi ospread <<<"$(stats "${oth[@]}")"
    SUMMARY+=("$(printf '%-10s %6s %4s %10s %8s%% %10s %8s%% %10s %8s%%' "$c" "$n" "$RUNS" \
        "$mean" "$spread" "$cmean" "$cspread" "$omean" "$ospread")")
    printf '{"kind":"case","case":"%s","n":%s,"runs":%s,"ir_per_call":%s,"min":%s,"max":%s,"spread_pct":%s,"caller_ir_per_call":%s,"caller_min":%s,"caller_max":%s,"caller_spread_pct":%s,"others_ir_per_call":%s,"others_spread_pct":%s,"lib":"%s","lib_sha256":"%s","valgrind":"%s","pin":"%s"}\n' \
        "$c" "$n" "$RUNS" "$mean" "$lo" "$hi" "$spread" "$cmean" "$clo" "$chi" "$cspread" \
        "$omean" "$ospread" "$LIB/libmcpc.so" "$LIB_SHA" "$VG" "$PIN" >>"$OUT"
done
echo
echo "instructions per call (mean of $RUNS runs; spread: (max - min) / mean)"
printf '%-10s %6s %4s %10s %9s %10s %9s %10s %9s\n' case N runs "all" spread "caller" spread "others" spread
printf '%s\n' "${SUMMARY[@]}"
echo "# JSON lines: $OUT; callgrind files: $BUILD/runs" >&2
