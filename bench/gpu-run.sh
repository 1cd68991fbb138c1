#!/usr/bin/env bash
# Everything one GPU session needs, in one call, on a machine that has the NVIDIA driver
# but no Vulkan loader, no glslc and no package registry (the CUDA half needs no loader:
# gpuscan opens it at run time, only for Vulkan). Build on the development machine
# first (scripts/build), then run this from the repository root on the GPU machine with
# build/bin and .gl carried along (or, where the binaries together pass the carry limit,
# build/gpu-bundle.tgz made by `tar -C build -czf build/gpu-bundle.tgz bin`, or .txz with
# -cJf, a third smaller):
#
#   .gl:  the Vulkan loader and GL vendor-neutral libraries (../shared/tools/
#         vulkan-loader-debs.sh .gl) plus vulkan-validationlayers
#         (cd .gl && apt-get download vulkan-validationlayers)
#
# It unpacks the loader, lists the devices, runs the whole test suite against the GPU's
# Vulkan driver with validation on (the type matrix also with logical subgroups of 4, 8
# and 16 lanes), the CLI test, then the benchmarks; then the CUDA suite and the CUDA
# benchmarks (with CUB), writing everything under $OUT. GPU_RUN_BACKENDS picks the halves
# ("vulkan cuda" by default).
# GPU_RUN_TESTS=0 skips the tests, GPU_RUN_CUDA_BENCH=0 the CUDA benchmarks (or
# GPU_RUN_CUDA_BENCHES picks some of: u32 f32 u64 split persistent blocking warm),
# GPU_RUN_CUDA_TUNING=1 adds a CUDA tuning sweep; GPU_RUN_SIZES overrides the Vulkan benchmark sweep,
# GPU_RUN_CUDA_SIZES the CUDA one; GPU_RUN_VULKAN_BENCHES picks Vulkan benchmarks (u32
# u32-256x4-counter f32 u64 stats blocking); GPU_RUN_LOGICAL_SUBGROUPS the logical
# subgroup sizes the type matrix runs again with (empty: none); GPU_RUN_TUNING=1 adds a
# tuning sweep, with the driver's register counts (GPUSCAN_PIPELINE_STATISTICS=1), of
# GPU_RUN_TUNING_DTYPES (u32) over GPU_RUN_TUNING_SHAPES (256x6 ...) and _DEPTHS (1 2).
set -uo pipefail
out=${OUT:-/tmp/gpuscan-gpu-run}
mkdir -p "$out"
bin=build/bin
sizes=${GPU_RUN_SIZES:-16:28}
cuda_sizes=${GPU_RUN_CUDA_SIZES:-10:30}
backends=${GPU_RUN_BACKENDS:-vulkan cuda}
# Failures are marked in a file: most steps run inside pipelines (| tee), whose subshells
# cannot set a variable of this shell.
rm -f "$out/failed"
fail() { touch "$out/failed"; }

[ -f build/gpu-bundle.tgz ] && tar -C build -xzf build/gpu-bundle.tgz
[ -f build/gpu-bundle.txz ] && tar -C build -xJf build/gpu-bundle.txz
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] && export VK_DRIVER_FILES=$icd

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  echo "profilers: $(command -v ncu nsys | tr '\n' ' ')"
  "$bin/gpuscan" devices
} 2>&1 | tee "$out/machine.txt"

bench() {  # backend, name, then gpuscan bench arguments; writes $out/BACKEND-NAME.csv
  local backend=$1 name=$2
  shift 2
  echo "== $backend bench $name: $* =="
  "$bin/gpuscan" bench --backend "$backend" "$@" --csv "$out/$backend-$name.csv" 2>&1 |
    grep -v "^bench: n =" || fail
}

if [[ " $backends " == *" vulkan "* ]]; then
[ "${GPU_RUN_TESTS:-1}" = 1 ] && {
  echo "== tests (Vulkan on the GPU, validation layers on) =="
  GPUSCAN_VALIDATION=1 "$bin/gpuscan_tests" --gtest_brief=1 || fail
  for lanes in ${GPU_RUN_LOGICAL_SUBGROUPS-4 8 16}; do
    echo "== type matrix with logical subgroups of $lanes =="
    GPUSCAN_VALIDATION=1 GPUSCAN_TEST_SUBGROUP_SIZE=$lanes "$bin/gpuscan_tests" --gtest_brief=1 \
      --gtest_filter='Vulkan/TypeTest.*' || fail
  done
  echo "== CLI =="
  GPUSCAN_VALIDATION=1 tests/cli_test.sh "$bin/gpuscan" || fail
} 2>&1 | grep -v "^note:" | tee "$out/tests.log"

want() { [[ " ${GPU_RUN_VULKAN_BENCHES:-u32 u32-256x4-counter f32 u64 stats blocking} " == *" $1 "* ]]; }
{
  want u32 && bench vulkan u32-add-inclusive --sizes "$sizes"
  # The default before change 17 (256 x 4, tiles from the counter), for comparison.
  want u32-256x4-counter && bench vulkan u32-add-inclusive-256x4-counter --sizes "$sizes" \
    --workgroup-size 256 --vectors-per-thread 4 --tile-order counter --algorithms csdldf,rts,memcpy
  want f32 && bench vulkan f32-add-inclusive --sizes "$sizes" --dtype f32
  if want u64; then
    bench vulkan u64-add-inclusive --sizes "$sizes" --dtype u64
    # The same bytes copied as u32 (twice the elements): u64's memcpy must match it.
    bench vulkan u32-memcpy-same-bytes-as-u64 --sizes 25:29 --algorithms memcpy
  fi
  want stats && bench vulkan u32-add-inclusive-stats --sizes 20:28 --runs 10 \
    --algorithms csdldf,csdl,memcpy --stats
  if want blocking; then
    bench vulkan u32-add-inclusive-blocking --sizes 24:28 --runs 20 --blocking --stats
    bench vulkan u32-add-inclusive-blocking-spins1 --sizes 24:28 --runs 20 --blocking --stats \
      --max-spins 1
  fi
} | tee "$out/bench.log"

if [ "${GPU_RUN_TUNING:-0}" = 1 ]; then
  for dtype in ${GPU_RUN_TUNING_DTYPES:-u32}; do
  echo "== $dtype tuning sweep at 2^26..2^28 (csdldf vs memcpy) =="
  for shape in ${GPU_RUN_TUNING_SHAPES:-256x6 256x8 512x3 128x8}; do
    for depth in ${GPU_RUN_TUNING_DEPTHS:-1 2}; do
      echo "-- workgroup ${shape%x*}, vectors per thread ${shape#*x}, look-back depth $depth"
      GPUSCAN_PIPELINE_STATISTICS=1 "$bin/gpuscan" bench --backend vulkan --dtype "$dtype" \
        --sizes 26:28 --runs 20 --algorithms csdldf,memcpy --workgroup-size "${shape%x*}" \
        --vectors-per-thread "${shape#*x}" --lookback-depth "$depth" --stats 2>&1 |
        grep -E "csdldf|pipeline chained" | cut -c1-150 || fail
    done
  done
  done 2>&1 | tee -a "$out/bench.log"
fi
fi

if [[ " $backends " == *" cuda "* ]]; then
[ "${GPU_RUN_TESTS:-1}" = 1 ] && {
  echo "== tests (CUDA) =="
  "$bin/gpuscan_cuda_tests" --gtest_brief=1 || fail
} 2>&1 | grep -v "^note:" | tee "$out/cuda-tests.log"
cuda_want() { [[ " ${GPU_RUN_CUDA_BENCHES:-u32 f32 u64 split persistent blocking warm} " == *" $1 "* ]]; }
[ "${GPU_RUN_CUDA_BENCH:-1}" = 1 ] && {
  cuda_want u32 && bench cuda u32-add-inclusive --sizes "$cuda_sizes"
  cuda_want f32 && bench cuda f32-add-inclusive --sizes "$cuda_sizes" --dtype f32
  cuda_want u64 && bench cuda u64-add-inclusive --sizes "$cuda_sizes" --dtype u64
  cuda_want split && bench cuda u32-add-inclusive-split --sizes 24:30 --tile-state split \
    --algorithms csdldf,cub,memcpy
  # The persistent kernel (three staged tiles, 60 KB tiles from 32 MiB on), for comparison.
  cuda_want persistent && bench cuda u32-add-inclusive-persistent --sizes 16:30 --staged-tiles 3 \
    --algorithms csdldf,cub,memcpy
  # Small n with each implementation's code fetched by an untimed run after the flush
  # (--warm-code, C39): how much of a small launch is its code arriving cold.
  cuda_want warm && bench cuda u32-small-warm-code --sizes 12:22 --algorithms csdldf,cub,memcpy \
    --warm-code
  if cuda_want blocking; then
    bench cuda u32-add-inclusive-blocking --sizes 24:28 --runs 20 --blocking --stats
    bench cuda u32-add-inclusive-blocking-spins1 --sizes 24:28 --runs 20 --blocking --stats \
      --max-spins 1
  fi
} | tee "$out/cuda-bench.log"
fi

if [ "${GPU_RUN_CUDA_TUNING:-0}" = 1 ]; then
  echo "== CUDA tuning sweep: small n (shapes, look-back depth), large n u32 and u64 =="
  sweep() {  # dtype, sizes, then bench options
    local dtype=$1 sizes=$2
    shift 2
    echo "-- $dtype $*"
    "$bin/gpuscan" bench --backend cuda --dtype "$dtype" --sizes "$sizes" --runs 20 \
      --algorithms csdldf,cub,memcpy "$@" 2>&1 | grep -E "csdldf|cub" || fail
  }
  small=65536,262144,1048576
  for shape in 256x4 256x6 512x4 128x8; do
    for depth in 1 2; do
      sweep u32 $small --workgroup-size "${shape%x*}" --vectors-per-thread "${shape#*x}" \
        --lookback-depth "$depth"
    done
  done
  large=67108864,134217728,268435456,1073741824
  for shape in 256x6 256x8 512x4 512x6; do
    sweep u32 $large --workgroup-size "${shape%x*}" --vectors-per-thread "${shape#*x}"
  done
  for shape in 256x8 256x4 512x4; do
    sweep u64 $large --workgroup-size "${shape%x*}" --vectors-per-thread "${shape#*x}"
  done
fi 2>&1 | tee "$out/cuda-tuning.log"
# Everything goes back as one archive (the runner returns a few files only), beside the
# failure marker.
status=0
[ -e "$out/failed" ] && status=1
tar -C "$out" -czf /tmp/gpu-run-results.tgz --exclude failed . && find "$out" -mindepth 1 -not -name failed -delete &&
  mv /tmp/gpu-run-results.tgz "$out/results.tgz"
exit $status
