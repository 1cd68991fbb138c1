#!/usr/bin/env bash
# Regenerates bench/results on a GPU machine: the test logs and the headline CSV + PNG of each
# backend and sweep, named after the GPU (h100-..., h200-...). Build on the development
# machine first (scripts/build); the GPU machine needs the NVIDIA driver only. Carry build/bin
# and build/lib (past the carry limit: build/gpu-bundle.tgz from
# `tar -C build -czf build/gpu-bundle.tgz bin lib`, or .txz with -cJf, a third smaller)
# and, for Vulkan, .gl: the Vulkan loader and the GL
# vendor-neutral libraries (../shared/tools/vulkan-loader-debs.sh .gl) plus
# `apt-get download vulkan-validationlayers` run in .gl. The CUDA phases need no loader.
#
#   bench/gpu-run.sh [PHASE...]      PHASE: cuda-tests cuda-bench vulkan-tests vulkan-bench
#                                    (default: these four, in that order), cuda-compaction
#                                    cuda-compaction-u64 vulkan-compaction
#
# One GPU command may run 10 minutes, so run the phases as separate calls. Approximate time
# on an H100, from earlier runs of the same sweeps:
#   cuda-tests    ~2 min   the CUDA instance of the shared suite, the CUDA-only tests, and
#                          the caller's-memory (cuda.hpp) and C ABI tests
#   cuda-bench    ~3 min   u32, f32, u64 at 2^10..2^30 (5 algorithms x 21 sizes x 30 runs);
#                          blocking at 2^24..2^28 (10 rates + unblocked + memcpy, 20 runs,
#                          statistics); small n at 2^10..2^20 (100 runs); the interop
#                          benchmark (enqueue host time, 1000-scan loops and graphs, CUB)
#   vulkan-tests  ~5 min   the Vulkan instance with validation layers, CUDA against Vulkan
#                          (CrossBackend), scans recorded into an application's command
#                          buffers (gpuscan/vulkan.hpp), the type matrix with logical
#                          subgroups of 4, the CLI test
#   vulkan-bench  ~4.5 min u32, f32, u64 at 2^16..2^28; blocking and small n as on CUDA
#   cuda-compaction      ~8 min  the six compaction operations, u32 at 2^26..2^30 (CUB and
#                                memcpy in each run, 10 runs), 1 in 2 blocked select and rle
#                                at 2^26..2^28
#   cuda-compaction-u64  ~2 min  the six, u64 at 2^26..2^28
#   vulkan-compaction    ~6 min  the six, u32 at 2^26..2^28 unblocked and 1 in 2 blocked, u64
#                                at 2^26..2^28
# The compaction phases keep one record a GPU, GPU-compaction.csv/.png: the rows of the
# backend and dtype a phase measures replace those of bench/results/GPU-compaction.csv (or of
# the file an earlier phase of the same call wrote), the rest stay (bench/merge_rows.py).
# COMPACTION_SIZES and COMPACTION_BLOCKED_SIZES replace their sizes (a dry run on a CPU
# driver: 14:16).
#
# Files go to $OUT (default /tmp/gpuscan-gpu-run): every phase writes GPU-machine.txt; the
# test phases GPU-BACKEND-tests.log; the bench phases GPU-BACKEND-{u32,f32,u64}-add-inclusive,
# GPU-BACKEND-u32-add-inclusive-blocking and GPU-BACKEND-u32-add-inclusive-small, each .csv
# and .png. bench/results/README.md lists them. The PNGs come from bench/plot.py, which needs
# matplotlib: the GPU machine's python3 lists it among its packages; where it is missing the
# phase says so and the plots are made afterwards with `python3 bench/plot.py FILE.csv`. The
# GPU machine returns at most 8 files, so everything goes back as $OUT/GPU-PHASES.tgz (extract
# it into bench/results), beside $OUT/failed when a step failed (exit status 1).
set -uo pipefail
out=${OUT:-/tmp/gpuscan-gpu-run}
bin=build/bin
phases=${*:-cuda-tests cuda-bench vulkan-tests vulkan-bench}
mkdir -p "$out"
rm -f "$out/failed"
fail() { touch "$out/failed"; }  # steps run in pipelines, whose subshells cannot set variables

[ -f build/gpu-bundle.tgz ] && tar -C build -xzf build/gpu-bundle.tgz
[ -f build/gpu-bundle.txz ] && tar -C build -xJf build/gpu-bundle.txz
for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] && export VK_DRIVER_FILES=$icd

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
gpu=${gpu:-gpu}
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  "$bin/gpuscan" devices
} 2>&1 | tee "$out/$gpu-machine.txt"
plots=1
python3 -c 'import matplotlib' 2>/dev/null || { plots=0; echo "note: no matplotlib, no PNGs"; }

bench() {  # backend, file name tail, gpuscan bench options: writes GPU-BACKEND-TAIL.csv/.png
  local backend=$1 csv="$out/$gpu-$1-$2.csv"
  shift 2
  echo "== $backend bench: $* =="
  "$bin/gpuscan" bench --backend "$backend" "$@" --csv "$csv" 2>&1 | grep -v "^bench: n =" || fail
  [ "$plots" = 1 ] && { python3 bench/plot.py "$csv" || fail; }
}

sweeps() {  # backend, sizes of the type sweeps
  bench "$1" u32-add-inclusive --sizes "$2"
  bench "$1" f32-add-inclusive --sizes "$2" --dtype f32
  bench "$1" u64-add-inclusive --sizes "$2" --dtype u64
  bench "$1" u32-add-inclusive-blocking --sizes 24:28 --runs 20 --blocking --stats
  bench "$1" u32-add-inclusive-small --sizes 10:20 --runs 100
}

compaction() {  # backend, dtype, sizes, operations also run 1 in 2 blocked
  local backend=$1 dtype=$2 sizes=${COMPACTION_SIZES:-$3} blocked=$4
  local dir="$out/compaction-$1-$2" csv="$out/$gpu-compaction.csv" base=bench/results/$gpu-compaction.csv
  local op swept=() blocked_runs=()
  mkdir -p "$dir"
  [ -f "$csv" ] && base=$csv
  for op in select unique rle partition partition-flagged select-flagged; do
    echo "== $backend compaction: $op, $dtype =="
    "$bin/gpuscan" bench --backend "$backend" --operation "$op" --dtype "$dtype" --sizes "$sizes" \
      --csv "$dir/$op.csv" 2>&1 && swept+=("$dir/$op.csv") || fail
  done
  for op in $blocked; do
    echo "== $backend compaction: $op, $dtype, 1 in 2 blocked =="
    "$bin/gpuscan" bench --backend "$backend" --operation "$op" --dtype "$dtype" --blocking \
      --sizes "${COMPACTION_BLOCKED_SIZES:-26:28}" --csv "$dir/$op-blocked.csv" 2>&1 &&
      blocked_runs+=("$dir/$op-blocked.csv") || fail
  done
  python3 bench/merge_rows.py "$csv" "$base" --replace "backend=$backend,dtype=$dtype" \
    "${swept[@]}" --blocked-only "${blocked_runs[@]}" || fail
  rm -r "$dir"
  [ "$plots" = 1 ] && { python3 bench/plot.py "$csv" --dtype u32 || fail; }
}

for phase in $phases; do
  case $phase in
    cuda-tests)
      {
        echo "== CUDA suite =="
        "$bin/gpuscan_tests" --gtest_brief=1 --gtest_filter='Cuda*' || fail
        echo "== CUDA on the caller's memory, streams and graphs; the C ABI =="
        LD_LIBRARY_PATH=build/lib "$bin/gpuscan_cuda_interop_tests" --gtest_brief=1 || fail
      } 2>&1 | grep -v "^note:" | tee "$out/$gpu-cuda-tests.log" ;;
    cuda-bench)
      sweeps cuda 10:30
      echo "== CUDA interop: enqueue host time, loops and graphs against CUB =="
      "$bin/gpuscan_interop_bench" "$out/$gpu-cuda-interop.csv" || fail ;;
    vulkan-tests)
      {
        echo "== Vulkan suite, validation layers on, and CUDA against Vulkan =="
        GPUSCAN_VALIDATION=1 "$bin/gpuscan_tests" --gtest_brief=1 --gtest_filter='-Cuda*' || fail
        echo "== scans recorded into an application's command buffers, validation layers on =="
        GPUSCAN_VALIDATION=1 "$bin/gpuscan_vulkan_interop_tests" --gtest_brief=1 || fail
        echo "== type matrix and odd sizes with logical subgroups of 4 =="
        GPUSCAN_VALIDATION=1 GPUSCAN_TEST_SUBGROUP_SIZE=4 "$bin/gpuscan_tests" --gtest_brief=1 \
          --gtest_filter='Vulkan/ScanTypes.*/*_csdldf:Vulkan/ScanSizes.SumsAtOddSizesOfEveryType/*' || fail
        echo "== CLI =="
        GPUSCAN_VALIDATION=1 tests/cli_test.sh "$bin/gpuscan" || fail
      } 2>&1 | grep -v "^note:" | tee "$out/$gpu-vulkan-tests.log" ;;
    vulkan-bench) sweeps vulkan 16:28 ;;
    cuda-compaction) compaction cuda u32 26:30 "select rle" ;;
    cuda-compaction-u64) compaction cuda u64 26:28 "" ;;
    vulkan-compaction)
      compaction vulkan u32 26:28 "select unique rle partition partition-flagged select-flagged"
      compaction vulkan u64 26:28 "" ;;
    *) echo "gpu-run.sh: unknown phase '$phase' (cuda-tests cuda-bench vulkan-tests vulkan-bench" \
         "cuda-compaction cuda-compaction-u64 vulkan-compaction)"
       fail ;;
  esac
done

status=0
[ -e "$out/failed" ] && status=1
archive=$gpu-${phases// /_}.tgz
tar -C "$out" -czf "/tmp/$archive" --exclude failed . &&
  find "$out" -mindepth 1 -not -name failed -delete && mv "/tmp/$archive" "$out/$archive"
exit $status
