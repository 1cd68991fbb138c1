#!/bin/bash
# vkinplace2 device script: in-place compaction A/B on the H100 (Vulkan).
# Usage: run.sh MODE   (MODE: exp = experiment bits; final = the kept version + tests)
cd "$(dirname "$0")"
for f in debs/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt
B=./gpuscan
mkdir -p /tmp/csv
log=$OUT/bench.log
bench() {  # exp op extra...
  local e=$1 op=$2; shift 2
  echo "== exp=$e op=$op $*" | tee -a $log
  GPUSCAN_BENCH_IN_PLACE=1 GPUSCAN_IN_PLACE_EXPERIMENT=$e $B bench --backend vulkan --operation $op "$@" 2>&1 | tee -a $log
}
if [ "$1" = exp ]; then
  GPUSCAN_PIPELINE_STATISTICS=1 bench 0 select --sizes 26 --runs 3 --csv /tmp/csv/stats0.csv
  GPUSCAN_PIPELINE_STATISTICS=1 bench 7 select --sizes 26 --runs 3 --stats
  for e in 0 1 2 4 3 5 6 7 0; do bench $e select --sizes 28 --runs 15 --csv /tmp/csv/select-exp$e.csv; done
  for e in 0 7; do bench $e select --sizes 28 --runs 5 --stats; done
  for op in select-flagged unique; do for e in 0 7; do bench $e $op --sizes 28 --runs 15 --csv /tmp/csv/$op-exp$e.csv; done; done
  for e in 0 7; do bench $e select --sizes 26,27,29 --runs 10 --blocking --csv /tmp/csv/select-sizes-exp$e.csv; done
  for e in 7 3 0; do
    echo "== tests exp=$e" | tee -a $OUT/tests.log
    GPUSCAN_IN_PLACE_EXPERIMENT=$e timeout 150 ./gpuscan_tests --gtest_filter='Vulkan/CompactionTest.InPlace*' --gtest_brief=1 2>&1 | tail -8 | tee -a $OUT/tests.log
  done
fi
tar cf $OUT/csv.tar -C /tmp csv
