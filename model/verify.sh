#!/usr/bin/env bash
# Model-check the inter-workgroup tile-state protocol with Spin: the scan's
# (model/scan.pml) and in-place compaction's (model/compact_inplace.pml).
# Exits 0 only if every check below gives its expected result:
#   - csdldf (Decoupled Fallback) is safe and has no non-progress cycle under
#     any scheduler (no fairness assumption);
#   - csdl (Decoupled Look-back, no fallback) HAS a non-progress cycle
#     (and none under weak fairness, i.e. it needs a fair scheduler);
#   - in-place compaction (select and unique with the output over the input,
#     the claim protocol of docs/protocol.md) is safe -- right output and
#     count, no scatter over input its holder has not read -- and has no
#     non-progress cycle under any scheduler;
#   - the broken variants are caught by the safety properties, among them
#     the scan's own fallback run in place and a claim published before the
#     input is read;
#   - the reachability probes fire (the safety result is not vacuous).
#
# Usage: model/verify.sh          (env: JOBS=n parallel checks, default 2;
#                                       CC=compiler, default cc;
#                                       KEEP=1 keeps the work directory;
#                                       FULL=1 adds the in-place model at 4
#                                       tiles and 3 workgroups: minutes and
#                                       a few GB, not run in CI)
# All generated files go to a fresh mktemp -d directory.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
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

# Common configuration of the scan's checks: 4 tiles, 3 resident
# workgroups, simulated blocking chosen nondeterministically per tile;
# MAX_SPINS is 2 unless a check says 1.
COMMON_scan="-DNT=4 -DNWG=3 -DBLOCKING=1"
# In-place compaction: simulated blocking (an owner may abandon its tile),
# stale (relaxed) spine and claim loads, which include the atomic ones; 2
# elements a tile; 4 tiles and 2 workgroups, or 3 tiles and 3 workgroups
# (4 and 3: FULL=1). MAX_SPINS is 1, which covers every bounded wait
# (docs/protocol.md, section 6.4).
COMMON_inplace="-DBLOCKING=1 -DSTALE_LOADS"

# id | model | mode | expectation | description | extra spin defines
#   model:  scan (scan.pml) | inplace (compact_inplace.pml)
#   mode:   safety (assertions + invalid end states), np (pan -l),
#           npfair (pan -l -f, weak fairness)
#   expect: ok | npcycle | assert:TAG (the violated assertion's tag)
CHECKS=(
"01|scan|safety|ok|csdldf safety S1-S4, atomic loads|-DFALLBACK=1"
"02|scan|safety|ok|csdldf safety S1-S4, stale (relaxed) loads|-DFALLBACK=1 -DSTALE_LOADS"
"03|scan|safety|ok|csdldf safety S1-S4, stale loads, MAX_SPINS=1|-DFALLBACK=1 -DSTALE_LOADS -DMAX_SPINS=1"
"04|scan|np|ok|csdldf no non-progress cycle, no fairness, atomic loads|-DFALLBACK=1"
"05|scan|np|ok|csdldf no non-progress cycle, no fairness, stale loads|-DFALLBACK=1 -DSTALE_LOADS"
"06|scan|np|ok|csdldf no non-progress cycle, no fairness, stale, MAX_SPINS=1|-DFALLBACK=1 -DSTALE_LOADS -DMAX_SPINS=1"
"07|scan|safety|ok|csdl   safety S1-S4 (values right when it finishes)|-DFALLBACK=0 -DSTALE_LOADS"
"08|scan|np|npcycle|csdl   non-progress cycle FOUND without fairness|-DFALLBACK=0"
"09|scan|npfair|ok|csdl   no non-progress cycle under weak fairness|-DFALLBACK=0"
"10|scan|safety|assert:S1_monotonic|broken: plain store in fallback insertion -> S1 violation FOUND|-DFALLBACK=1 -DBROKEN_STORE"
"11|scan|safety|assert:S3_prefix|broken: look-back accepts torn reads -> S3 violation FOUND|-DFALLBACK=1 -DBROKEN_TORN"
"12|scan|safety|assert:S2_well_formed|broken: fallback inserts INCLUSIVE on tile>0 -> S2 violation FOUND|-DFALLBACK=1 -DBROKEN_FB_INCLUSIVE"
"13|scan|safety|assert:PROBE_torn_read|probe: torn look-back read is reachable|-DFALLBACK=1 -DPROBE=1"
"14|scan|safety|assert:PROBE_false_positive|probe: fallback finds tile>0 already INCLUSIVE|-DFALLBACK=1 -DPROBE=2"
"15|scan|safety|assert:PROBE_successful_insertion|probe: successful insertion (was NOT_READY)|-DFALLBACK=1 -DPROBE=3"
"16|inplace|safety|ok|in-place select safety, 4 tiles, 2 WGs|-DNT=4 -DNWG=2"
"17|inplace|safety|ok|in-place select safety, 3 tiles, 3 WGs|-DNT=3 -DNWG=3"
"18|inplace|safety|ok|in-place unique safety, 4 tiles, 2 WGs|-DNT=4 -DNWG=2 -DUNIQUE=1"
"19|inplace|safety|ok|in-place unique safety, 3 tiles, 3 WGs|-DNT=3 -DNWG=3 -DUNIQUE=1"
"20|inplace|safety|ok|in-place select safety, K=2 words (torn reads), 4 tiles, 2 WGs|-DNT=4 -DNWG=2 -DK=2"
"21|inplace|np|ok|in-place select no non-progress cycle, 3 tiles, 3 WGs|-DNT=3 -DNWG=3"
"22|inplace|np|ok|in-place unique no non-progress cycle, 4 tiles, 2 WGs|-DNT=4 -DNWG=2 -DUNIQUE=1"
"23|inplace|safety|assert:S5_no_clobber|broken: the scan's fallback in place (no claim) -> S5 FOUND|-DNT=3 -DNWG=3 -DSCAN_FALLBACK"
"24|inplace|safety|assert:S5_no_clobber|broken: claim published before the input is read -> S5 FOUND|-DNT=3 -DNWG=3 -DEARLY_PUBLISH"
"25|inplace|safety|assert:S5_no_clobber|broken: unique, claim published before the read -> S5 FOUND|-DNT=3 -DNWG=3 -DUNIQUE=1 -DEARLY_PUBLISH"
"26|inplace|safety|assert:S2_well_formed|broken: claim by atomicMax, not CAS -> S2 FOUND|-DNT=3 -DNWG=3 -DCLAIM_MAX"
"27|inplace|safety|assert:S2_well_formed|broken: a losing claimer uses its own count -> S2 FOUND|-DNT=3 -DNWG=3 -DLOSER_OWN_COUNT"
"28|inplace|safety|assert:S5_no_clobber|broken: a late owner that lost does its tile anyway -> S5 FOUND|-DNT=3 -DNWG=3 -DOWNER_NO_SKIP"
"34|inplace|safety|assert:S5_no_clobber|broken: the up-walk window takes an unclaimed tile -> S5 FOUND|-DNT=3 -DNWG=3 -DWINDOW_SKIPS_UNCLAIMED"
"35|inplace|safety|assert:S5_no_clobber|broken: unique, window takes an unclaimed tile -> S5 FOUND|-DNT=4 -DNWG=2 -DUNIQUE=1 -DWINDOW_SKIPS_UNCLAIMED"
"29|inplace|safety|assert:PROBE_owner_lost|probe: a late owner loses its claim and skips|-DNT=3 -DNWG=3 -DPROBE=1"
"30|inplace|safety|assert:PROBE_fallback_won|probe: a fallback wins a claim and scatters the tile|-DNT=3 -DNWG=3 -DPROBE=2"
"31|inplace|safety|assert:PROBE_loser_clobbered|probe: a claimer read clobbered input, then lost|-DNT=3 -DNWG=3 -DPROBE=3"
"32|inplace|safety|assert:PROBE_two_fallbacks|probe: two fallbacks claim one tile|-DNT=3 -DNWG=3 -DPROBE=4"
"33|inplace|safety|assert:PROBE_cross_tile_scatter|probe: a scatter lands on an earlier tile's input|-DNT=3 -DNWG=3 -DPROBE=5"
"36|inplace|safety|assert:PROBE_window_claimed|probe: an up-walk window step takes a claimed tile after another|-DNT=3 -DNWG=3 -DPROBE=6"
)
if [ "${FULL:-0}" = 1 ]; then
    CHECKS+=(
"37|inplace|safety|ok|in-place select safety, 4 tiles, 3 WGs|-DNT=4 -DNWG=3"
"38|inplace|safety|ok|in-place unique safety, 4 tiles, 3 WGs|-DNT=4 -DNWG=3 -DUNIQUE=1"
"39|inplace|np|ok|in-place select no non-progress cycle, 4 tiles, 3 WGs|-DNT=4 -DNWG=3"
    )
fi

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

# run_check ID MODEL MODE EXPECT DEFINES  -> writes $work/ID/{pan.out,result}
run_check() {
    local id=$1 which=$2 mode=$3 expect=$4 defs=$5
    local dir="$work/$id" ccflags panflags opt=-O2 pml common
    case $which in
        scan)    pml=scan.pml;            common=$COMMON_scan ;;
        inplace) pml=compact_inplace.pml; common=$COMMON_inplace ;;
    esac
    mkdir -p "$dir" && cd "$dir" || return
    cp "$here/$pml" "$pml"
    case $mode in
        safety) ccflags=-DSAFETY; panflags="" ;;
        np)     ccflags=-DNP;     panflags="-l" ;;
        npfair) ccflags=-DNP;     panflags="-l -f" ;;
    esac
    # runs expected to stop at the first error are tiny: skip optimisation
    [ "$expect" = ok ] || opt=-O0
    # FULL=1's larger checks: compressed states and a larger hash table
    local hashw=22
    if [ "${FULL:-0}" = 1 ]; then ccflags="$ccflags -DCOLLAPSE"; hashw=26; fi
    local t0; t0=$(now)
    # shellcheck disable=SC2086
    if ! spin $common $defs -a "$pml" >spin.out 2>&1; then
        echo "FAIL|spin -a failed: $(tail -n 3 spin.out | tr '\n' ' ')" >result; return
    fi
    if ! "$CC" -w $opt $ccflags -o pan pan.c >cc.out 2>&1; then
        echo "FAIL|compiling pan.c failed: $(tail -n 3 cc.out | tr '\n' ' ')" >result; return
    fi
    # shellcheck disable=SC2086
    ./pan -m100000 -w$hashw $panflags >pan.out 2>&1
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
echo "scan.pml: $COMMON_scan -DMAX_SPINS=2 (unless noted), K=2 words/tile"
echo "compact_inplace.pml: $COMMON_inplace -DMAX_SPINS=1, K=1 word/tile (unless noted)"
start=$(now)

# run up to $JOBS checks at a time
running=0
for c in "${CHECKS[@]}"; do
    IFS='|' read -r id which mode expect desc defs <<<"$c"
    ( run_check "$id" "$which" "$mode" "$expect" "$defs" ) &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

fail=0
for c in "${CHECKS[@]}"; do
    IFS='|' read -r id which mode expect desc defs <<<"$c"
    res=$(cat "$work/$id/result" 2>/dev/null || echo "FAIL|no result")
    verdict=${res%%|*}
    detail=${res#*|}
    printf '%-4s %-72s %s\n' "$verdict" "$desc" "$detail"
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
