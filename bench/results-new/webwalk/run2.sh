#!/usr/bin/env bash
# Device call 2 (session 22, webwalk): driver statistics, an A/B of the look-back timing
# variants and a ladder of diagnostics beside the new default (base: the one-tile-a-lane
# window) in two processes, the WebGPU tests on the H100, then the committed sweep
# (gpu-run.sh bench's command) with the best of base/late/ahead/both at 2^24..2^28.
cd "$(dirname "$0")"
t0=$(date +%s)
commit=$1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=/tmp/bin:$PATH
STATS_CONFIGS='base={} late={"experiment":16384} ahead={"experiment":32768} both={"experiment":49152} d16={"experiment":16} d272={"experiment":272} d400={"experiment":400} d464={"experiment":464} v6d464={"experiment":464,"vectorsPerThread":6} v6d272={"experiment":272,"vectorsPerThread":6}' \
  timeout 90 ./gpu-run.sh "$commit" stats
cat "$OUT/stats.log"; echo "stats after $(( $(date +%s) - t0 )) s"
declare -A OPTS=([base]="" [late]="experiment=16384" [ahead]="experiment=32768" [both]="experiment=49152")
V="base:;late:experiment=16384;ahead:experiment=32768;both:experiment=49152;d16:experiment=16;d272:experiment=272;d400:experiment=400;d464:experiment=464;v6d464:experiment=464+vectorsPerThread=6;v6d272:experiment=272+vectorsPerThread=6"
AB_VARIANTS="$V" AB_TOGGLES="none none" AB_RUNS=10 AB_TIMEOUT=90 timeout 200 ./gpu-run.sh "$commit" ab
echo "ab after $(( $(date +%s) - t0 )) s"
grep -E "==|2\^2[4-8]|exit|device|rror" "$OUT/ab.log" | grep -v "validation errors" | sed 's/  */ /g' | awk '/^n=/{print $1,$2,$3,$9,$11,$12; next} {print}'
best=$(cat "$OUT"/ab-*.csv | awk -F, '$5 ~ /^csdldf:(base|late|ahead|both)$/ && $15 == "" {s[$5]+=$13; c[$5]++} END {for (k in s) print s[k]/c[k], k}' | sort -g | tail -1 | cut -d" " -f2 | cut -d: -f2)
echo "best: ${best:=base}"
(cd pkg && timeout 100 node --test --test-reporter=spec test/*.test.mjs >"$OUT/tests.log" 2>&1; echo "tests exit $?" >>"$OUT/tests.log")
grep -E "^ℹ (tests|pass|fail|skipped)|^✖|not ok|tests exit" "$OUT/tests.log"; echo "tests after $(( $(date +%s) - t0 )) s"
var=(); [[ $best != base ]] && var=(--variants "$best:${OPTS[$best]}")
dev="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 | sed 's/, / (Dawn Vulkan; driver /; s/$/)/')"
(cd pkg && timeout 120 node bench.mjs --sizes 16:28 --runs 20 --algorithms csdldf,rts,memcpy,csdl \
  --blocking-mask 1 --commit "$commit" --csv "$OUT/bench.csv" --device "$dev" "${var[@]}" 2>"$OUT/bench.log")
echo "bench exit $?" >>"$OUT/bench.log"
grep -E "2\^|exit|rror" "$OUT/bench.log" | grep -v "validation errors" | sed 's/  */ /g' | awk '/^n=/{print $1,$2,$3,$9,$11,$12; next} {print}'
echo "all after $(( $(date +%s) - t0 )) s"
