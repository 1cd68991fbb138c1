#!/usr/bin/env bash
# Model-check the inter-workgroup tile-state protocol (model/scan.pml) with
# Spin.  Exits 0 only if every check below gives its expected result:
#   - csdldf (Decoupled Fallback) is safe and has no non-progress cycle under
#     any scheduler (no fairness assumption);
#   - csdl (Decoupled Look-back, no fallback) HAS a non-progress cycle
#     (and none under weak fairness, i.e. it needs a fair scheduler);
#   - the broken variants are caught by the safety properties;
#   - the reachability probes fire (the safety result is not vacuous).
#
# Usage: model/verify.sh          (env: JOBS=n parallel checks, default 2;
#                                       CC=compiler, default cc;
#                                       KEEP=1 keeps the work directory)
# All generated files go to a fresh mktemp -d directory.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
model="$here/scan.pml"
CC=${CC:-cc}
JOBS=${JOBS:-2}

for tool in spin "$CC"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "verify.sh: '$tool' not found (Debian/Ubuntu: apt-get install spin gcc)" >&2
        exit 2
    fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscan-model.XXXXXX") || exit 2
if [ "${KEEP:-0}" = 1 ]; then
    echo "work directory: $work"
else
    trap 'rm -rf "$work"' EXIT
fi

# Common configuration: 4 tiles, 3 resident workgroups, simulated blocking
# chosen nondeterministically per tile; MAX_SPINS is 2 unless a check says 1.
COMMON="-DNT=4 -DNWG=3 -DBLOCKING=1"

# id | mode | expectation | description | extra spin defines
#   mode:   safety (assertions + invalid end states), np (pan -l),
#           npfair (pan -l -f, weak fairness)
#   expect: ok | npcycle | assert:TAG (the violated assertion's tag)
CHECKS=(
"01|safety|ok|csdldf safety S1-S4, atomic loads|-DFALLBACK=1"
"02|safety|ok|csdldf safety S1-S4, stale (relaxed) loads|-DFALLBACK=1 -DSTALE_LOADS"
"03|safety|ok|csdldf safety S1-S4, stale loads, MAX_SPINS=1|-DFALLBACK=1 -DSTALE_LOADS -DMAX_SPINS=1"
"04|np|ok|csdldf no non-progress cycle, no fairness, atomic loads|-DFALLBACK=1"
"05|np|ok|csdldf no non-progress cycle, no fairness, stale loads|-DFALLBACK=1 -DSTALE_LOADS"
"06|np|ok|csdldf no non-progress cycle, no fairness, stale, MAX_SPINS=1|-DFALLBACK=1 -DSTALE_LOADS -DMAX_SPINS=1"
"07|safety|ok|csdl   safety S1-S4 (values right when it finishes)|-DFALLBACK=0 -DSTALE_LOADS"
"08|np|npcycle|csdl   non-progress cycle FOUND without fairness|-DFALLBACK=0"
"09|npfair|ok|csdl   no non-progress cycle under weak fairness|-DFALLBACK=0"
"10|safety|assert:S1_monotonic|broken: plain store in fallback insertion -> S1 violation FOUND|-DFALLBACK=1 -DBROKEN_STORE"
"11|safety|assert:S3_prefix|broken: look-back accepts torn reads -> S3 violation FOUND|-DFALLBACK=1 -DBROKEN_TORN"
"12|safety|assert:S2_well_formed|broken: fallback inserts INCLUSIVE on tile>0 -> S2 violation FOUND|-DFALLBACK=1 -DBROKEN_FB_INCLUSIVE"
"13|safety|assert:PROBE_torn_read|probe: torn look-back read is reachable|-DFALLBACK=1 -DPROBE=1"
"14|safety|assert:PROBE_false_positive|probe: fallback finds tile>0 already INCLUSIVE|-DFALLBACK=1 -DPROBE=2"
"15|safety|assert:PROBE_successful_insertion|probe: successful insertion (was NOT_READY)|-DFALLBACK=1 -DPROBE=3"
)

now() { date +%s.%N; }

# first_error FILE: the first error pan reported, shortened to the tag of the
# violated assertion where there is one
first_error() {
    local line
    line=$(grep -m1 -e 'assertion violated' -e 'cycle (at' -e 'invalid end state' \
                    -e 'acceptance cycle' "$1")
    if [[ $line =~ assertion\ violated\ \(([A-Za-z0-9_]+)\&\& ]]; then
        echo "assertion ${BASH_REMATCH[1]} violated"
    elif [ -n "$line" ]; then
        echo "${line:0:100}"
    else
        grep -m1 'errors:' "$1"
    fi
}

# run_check ID MODE EXPECT DEFINES  -> writes $work/ID/{pan.out,result}
run_check() {
    local id=$1 mode=$2 expect=$3 defs=$4
    local dir="$work/$id" ccflags panflags opt=-O2
    mkdir -p "$dir" && cd "$dir" || return
    cp "$model" scan.pml
    case $mode in
        safety) ccflags=-DSAFETY; panflags="" ;;
        np)     ccflags=-DNP;     panflags="-l" ;;
        npfair) ccflags=-DNP;     panflags="-l -f" ;;
    esac
    # runs expected to stop at the first error are tiny: skip optimisation
    [ "$expect" = ok ] || opt=-O0
    local t0; t0=$(now)
    # shellcheck disable=SC2086
    if ! spin $COMMON $defs -a scan.pml >spin.out 2>&1; then
        echo "FAIL|spin -a failed: $(tail -n 3 spin.out | tr '\n' ' ')" >result; return
    fi
    if ! "$CC" -w $opt $ccflags -o pan pan.c >cc.out 2>&1; then
        echo "FAIL|compiling pan.c failed: $(tail -n 3 cc.out | tr '\n' ' ')" >result; return
    fi
    # shellcheck disable=SC2086
    ./pan -m100000 -w22 $panflags >pan.out 2>&1
    local secs; secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}')

    local errors states
    errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.out | head -n1)
    states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | head -n1)
    local info="${states:-?} states, ${secs}s"
    if [ -z "$errors" ]; then
        echo "FAIL|pan produced no verdict ($info)" >result; return
    fi
    if grep -q -e "max search depth too small" -e "out of memory" pan.out; then
        echo "FAIL|search incomplete: depth or memory limit hit ($info)" >result; return
    fi
    case $expect in
        ok)
            if [ "$errors" = 0 ] && ! grep -q "Search not completed" pan.out; then
                echo "PASS|no errors, exhaustive ($info)" >result
            else
                echo "FAIL|unexpected: $(first_error pan.out) ($info)" >result
            fi ;;
        npcycle)
            if grep -q "non-progress cycle (at depth" pan.out; then
                echo "PASS|cycle found as expected ($info)" >result
            else
                echo "FAIL|no non-progress cycle found ($info)" >result
            fi ;;
        assert:*)
            local tag=${expect#assert:}
            if grep -q "assertion violated ($tag&&" pan.out; then
                echo "PASS|$tag violated as expected ($info)" >result
            else
                echo "FAIL|expected a $tag violation, got: $(first_error pan.out) ($info)" >result
            fi ;;
    esac
}

echo "Spin model check of the tile-state protocol ($(spin -V 2>&1 | head -n1))"
echo "config: $COMMON -DMAX_SPINS=2 (unless noted), K=2 words/tile"
start=$(now)

# run up to $JOBS checks at a time
running=0
for c in "${CHECKS[@]}"; do
    IFS='|' read -r id mode expect desc defs <<<"$c"
    ( run_check "$id" "$mode" "$expect" "$defs" ) &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

fail=0
for c in "${CHECKS[@]}"; do
    IFS='|' read -r id mode expect desc defs <<<"$c"
    res=$(cat "$work/$id/result" 2>/dev/null || echo "FAIL|no result")
    verdict=${res%%|*}
    detail=${res#*|}
    printf '%-4s %-68s %s\n' "$verdict" "$desc" "$detail"
    if [ "$verdict" != PASS ]; then
        fail=1
        [ -f "$work/$id/pan.out" ] && sed 's/^/      | /' "$work/$id/pan.out" | head -n 30
    fi
done

total=$(awk -v a="$start" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}')
if [ "$fail" = 0 ]; then
    echo "ALL CHECKS PASSED (${total}s)"
else
    echo "SOME CHECKS FAILED (${total}s)"
fi
exit "$fail"
