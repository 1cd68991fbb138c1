#!/usr/bin/env bash
# Device call 1 (session 22, webwalk): driver statistics of each variant, then an A/B of
# the variants beside the unchanged kernel (base), memcpy and rts in three processes (no
# toggles, Dawn's disable_robustness + disable_workgroup_init, no toggles again), each run
# validated, and the statistics variant's look-back steps per tile for base and wide.
cd "$(dirname "$0")"
t0=$(date +%s)
commit=$1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=/tmp/bin:$PATH
STATS_CONFIGS='base={} wide={"experiment":8192} wide384={"experiment":8192,"workgroupSize":384} wide512={"experiment":8192,"workgroupSize":512} n384={"workgroupSize":384} d16={"experiment":16}' \
  timeout 90 ./gpu-run.sh "$commit" stats
cat "$OUT/stats.log"; echo "stats after $(( $(date +%s) - t0 )) s"
V="base:;wide:experiment=8192;wide384:experiment=8192+workgroupSize=384;wide512:experiment=8192+workgroupSize=512;n384:workgroupSize=384;d16:experiment=16"
AB_VARIANTS="$V" AB_TOGGLES="none disable_robustness,disable_workgroup_init none" AB_RUNS=10 AB_TIMEOUT=80 timeout 260 ./gpu-run.sh "$commit" ab
echo "ab after $(( $(date +%s) - t0 )) s"
grep -E "==|2\^2[4-8]|exit|device|rror" "$OUT/ab.log" | grep -v "validation errors" | sed 's/  */ /g' | head -200
cd pkg
dev="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 | sed 's/, / (Dawn Vulkan; driver /; s/$/)/')"
timeout 40 node bench.mjs --sizes 24:28 --runs 3 --algorithms csdldf --stats --blocking-mask 1 \
  --variants "base:;wide:experiment=8192;wide384:experiment=8192+workgroupSize=384" --device "$dev" --csv "$OUT/steps.csv" >"$OUT/steps.log" 2>&1
echo "steps exit $?" >>"$OUT/steps.log"
grep -vE "^\s*$" "$OUT/steps.log" | sed 's/  */ /g' | tail -30
echo "all after $(( $(date +%s) - t0 )) s"
