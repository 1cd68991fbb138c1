#!/usr/bin/env bash
# Everything one GPU session needs, in one call, on a machine that has the NVIDIA driver
# but no Vulkan loader, no glslc and no package registry. Build on the development machine
# first (cmake --build build), then run this from the repository root on the GPU machine
# with build/bin and .gl carried along:
#
#   .gl:  the Vulkan loader and GL vendor-neutral libraries (../shared/tools/
#         vulkan-loader-debs.sh .gl) plus vulkan-validationlayers
#         (cd .gl && apt-get download vulkan-validationlayers)
#
# It unpacks the loader, lists the devices, runs the whole test suite against the NVIDIA
# Vulkan driver with validation on, then the benchmarks, writing everything under $OUT.
# GPU_RUN_SIZES overrides the benchmark sweep; GPU_RUN_TUNING=1 adds a tuning sweep.
# GPUSCAN_PIPELINE_STATISTICS=1 (in the sweep) prints the driver's register counts.
set -uo pipefail
out=${OUT:-/tmp/gpuscan-gpu-run}
mkdir -p "$out"
bin=build/bin
status=0

for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] && export VK_DRIVER_FILES=$icd

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  "$bin/gpuscan" devices
} 2>&1 | tee "$out/machine.txt"

echo "== tests (Vulkan on the GPU, validation layers on) =="
GPUSCAN_VALIDATION=1 "$bin/gpuscan_tests" --gtest_brief=1 2>&1 | tee "$out/tests.log" || status=1

echo "== bench: u32 add inclusive =="
"$bin/gpuscan" bench --backend vulkan --sizes "${GPU_RUN_SIZES:-16:28}" \
  --csv "$out/vulkan-u32-add-inclusive.csv" 2>&1 | tee "$out/bench.log" || status=1

echo "== bench: u32 add inclusive, tuned tile shape (1024 x 2 vectors, tiles in dispatch order) =="
"$bin/gpuscan" bench --backend vulkan --sizes "${GPU_RUN_SIZES:-16:28}" --workgroup-size 1024 \
  --vectors-per-thread 2 --dispatch-order --algorithms csdldf,rts,memcpy \
  --csv "$out/vulkan-u32-add-inclusive-tuned.csv" 2>&1 | tee "$out/bench-tuned.log" || status=1

echo "== look-back statistics (csdldf, csdl) =="
"$bin/gpuscan" bench --backend vulkan --sizes 20:28 --runs 10 --algorithms csdldf,csdl,memcpy --stats \
  --csv "$out/vulkan-u32-add-inclusive-stats.csv" 2>&1 | tee "$out/stats.log" || status=1

if [ "${GPU_RUN_TUNING:-0}" = 1 ]; then
  echo "== tuning sweep at 2^26..2^28 (csdldf vs memcpy) =="
  GPUSCAN_PIPELINE_STATISTICS=1 "$bin/gpuscan" bench --backend vulkan --sizes 20:20 --runs 2 2>&1 | grep "^pipeline"
  for shape in "256 4" "512 4" "1024 4" "512 8" "1024 2"; do
    set -- $shape
    for order in "" "--dispatch-order"; do
      echo "-- workgroup $1, vectors per thread $2 $order"
      GPUSCAN_PIPELINE_STATISTICS=1 "$bin/gpuscan" bench --backend vulkan --sizes 26:28 --runs 20 \
        --algorithms csdldf,memcpy --workgroup-size "$1" --vectors-per-thread "$2" --lookback-depth 1 \
        $order 2>&1 | grep -E "csdldf|pipeline chained" | cut -c1-110 || status=1
    done
  done 2>&1 | tee "$out/tuning.log"
fi
exit $status
