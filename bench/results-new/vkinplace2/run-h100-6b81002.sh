#!/bin/bash
cd "$(dirname "$0")"
for f in debs/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/csv; log=$OUT/bench.log
bench() { local e=$1 op=$2; shift 2; echo "== exp=$e op=$op $*" | tee -a $log
  GPUSCAN_BENCH_IN_PLACE=1 GPUSCAN_IN_PLACE_EXPERIMENT=$e ./gpuscan bench --backend vulkan --operation $op "$@" 2>&1 | tee -a $log; }
for e in 0 1 4 5 7 2 0 5; do bench $e select --sizes 28:28 --runs 15 --csv /tmp/csv/select-2p28-exp$e.csv; done
bench 0 select --sizes 28:28 --runs 5 --stats; bench 5 select --sizes 28:28 --runs 5 --stats
for op in unique select-flagged; do for e in 0 5; do bench $e $op --sizes 28:28 --runs 15 --csv /tmp/csv/$op-2p28-exp$e.csv; done; done
tar cf $OUT/csv.tar -C /tmp csv
